"""What every pump of one syphon shares: its own module, so the pump and the settlement it hands
batches to both name it without importing each other."""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pairedbus.pairing.connections import ConnectionPair
from pairedbus.syphon.backoff import Backoff
from pairedbus.syphon.destinations import Destinations
from pairedbus.syphon.in_flight import InFlightBudget
from pairedbus.syphon.options import SyphonOptions
from pairedbus.syphon.stats import SyphonStats

#: Redelivered settlements remembered (a copy comes a lock duration after its first delivery).
_SETTLED_COPIES = 100_000


class RecentKeys:
    """The last `size` keys added, as a set (the oldest dropped first)."""

    def __init__(self, size: int) -> None:
        self._keys: OrderedDict[Hashable, None] = OrderedDict()
        self._size = size

    def add(self, key: Hashable) -> None:
        self._keys[key] = None
        self._keys.move_to_end(key)
        if len(self._keys) > self._size:
            self._keys.popitem(last=False)

    def __contains__(self, key: object) -> bool:
        return key in self._keys


@dataclass
class SyphonContext:
    """What every pump shares."""

    options: SyphonOptions
    stats: SyphonStats
    budget: InFlightBudget
    backoff: Backoff
    destinations: Destinations
    secondary: Any  # aio ServiceBusClient of the secondary namespace
    pair: ConnectionPair
    now: Callable[[], datetime]
    #: The back-offs' jitter source (`pairing.backoff`; None: a shared one).
    rng: random.Random | None = None
    #: (backlog queue, sequence number) of the redelivered messages settled lately: a settlement whose
    #: answer was lost is not counted again when a copy of its message was (`settlement.Settlement`).
    settled_copies: RecentKeys = field(default_factory=lambda: RecentKeys(_SETTLED_COPIES))
