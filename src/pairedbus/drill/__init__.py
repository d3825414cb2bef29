"""`pairedbus drill`: an end-to-end failover drill on the Service Bus fake that accounts for
every message (see run.py for the sequence, ledger.py for the accounting)."""

from pairedbus.drill.report import DrillReport
from pairedbus.drill.run import run_drill, run_drill_on_fake
from pairedbus.drill.scenario import DrillConfig

__all__ = ["DrillConfig", "DrillReport", "run_drill", "run_drill_on_fake"]
