"""The world's fault injection: what an injected fault is.

Its `error` is an `ErrorKind` or a front-end's own value (an azure-servicebus exception class,
instance or factory from the in-process front-end's users), carried as is: `errors.injected` raises
it as a `ServiceError` and the front-end makes the error its clients see.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Fault"]


@dataclass
class Fault:
    error: object
    remaining: int | None  # None: until healed
