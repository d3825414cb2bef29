"""The world's fault injection: what an injected fault is (its error is made in errors.py)."""

from __future__ import annotations

from dataclasses import dataclass

from pairedbus.testing.errors import ErrorFactory

__all__ = ["ErrorFactory", "Fault"]


@dataclass
class Fault:
    error: ErrorFactory
    remaining: int | None  # None: until healed
