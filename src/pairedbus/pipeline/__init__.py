"""The estate data pipeline: exports from Azure (inventory, metrics) and the Spark audit.

Importing this package is cheap: the Azure SDKs and PySpark load inside the functions.
"""

from __future__ import annotations

from pairedbus.pipeline.inventory_export import export_inventory
from pairedbus.pipeline.metrics_export import export_metrics

__all__ = ["export_inventory", "export_metrics"]
