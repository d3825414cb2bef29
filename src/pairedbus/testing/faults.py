"""The world's fault injection: what an injected fault is and how its error is made."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

ErrorFactory = type[BaseException] | BaseException | Callable[[], BaseException]


def make_error(error: ErrorFactory, what: str) -> BaseException:
    if isinstance(error, BaseException):
        return error
    if isinstance(error, type):
        try:  # the SDK's and azure.core's errors take message=
            return error(message=f"Injected fault on {what}.")  # type: ignore[call-arg]
        except TypeError:
            return error()
    return error()


@dataclass
class Fault:
    error: ErrorFactory
    remaining: int | None  # None: until healed
