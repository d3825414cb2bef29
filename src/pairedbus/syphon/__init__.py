"""The syphon: moves parked messages from the backlog queues to their primary destinations."""

from pairedbus.syphon.close_fault import SyphonFaulted
from pairedbus.syphon.options import SyphonOptions
from pairedbus.syphon.stats import SyphonStats
from pairedbus.syphon.syphon import Syphon

__all__ = ["Syphon", "SyphonFaulted", "SyphonOptions", "SyphonStats"]
