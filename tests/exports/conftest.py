"""Ids shared by the exporter tests (the same as the audit pipeline's: tests/azure_monitor.py)."""

from __future__ import annotations

from tests.azure_monitor import SUBSCRIPTION, ns_id

__all__ = ["SUBSCRIPTION", "ns_id"]
