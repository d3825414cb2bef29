"""`pairedbus drill`: an end-to-end failover drill that accounts for every message, on the
in-process fake (the quick default) or over the wire (see run.py for the sequence, world.py for
the two worlds, ledger.py for the accounting). The wire drill is `pairedbus.drill.wire.run_drill_on_wire`
(imported on demand: it brings the emulator)."""

from pairedbus.drill.in_process import run_drill_on_fake
from pairedbus.drill.report import DrillReport
from pairedbus.drill.run import run_drill
from pairedbus.drill.scenario import DrillConfig

__all__ = ["DrillConfig", "DrillReport", "run_drill", "run_drill_on_fake"]
