"""What every pump of one syphon shares: its own module, so the pump and the settlement it hands
batches to both name it without importing each other."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Generic

from pairedbus.pairing.connections import ConnectionPair
from pairedbus.pairing.ports import M, ReceiverSource
from pairedbus.syphon.destinations import Destinations
from pairedbus.syphon.health import Health
from pairedbus.syphon.in_flight import InFlightBudget
from pairedbus.syphon.lock_keeper import LockKeeper
from pairedbus.syphon.options import SyphonOptions
from pairedbus.syphon.stats import SyphonStats


@dataclass
class SyphonContext(Generic[M]):
    """What every pump shares; `M`: the received messages' type (`pairing.ports`)."""

    options: SyphonOptions
    stats: SyphonStats
    budget: InFlightBudget
    #: Each destination's health: its back-offs, keyed failures in a row, since when it is down.
    health: Health
    destinations: Destinations
    #: The secondary's aio ServiceBusClient (or, in a drain's first round, `WarmReceivers` on it).
    secondary: ReceiverSource[M]
    pair: ConnectionPair
    now: Callable[[], datetime]
    #: The back-offs' jitter source (`pairing.backoff`; None: a shared one).
    rng: random.Random | None = None
    #: (backlog queue, sequence number) of messages whose settlement's answer was lost, while a peek
    #: tells whether it was applied; True once a redelivered copy was settled meanwhile (counted then).
    confirming: dict[tuple[str, int | None], bool] = field(default_factory=dict)
    #: The lock keepers of received batches holding messages not yet settled (`LockKeeper.give_back`).
    holders: set[LockKeeper[M]] = field(default_factory=set)
