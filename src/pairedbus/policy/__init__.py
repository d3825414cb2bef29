"""The CrossGuard policy pack (`pack.POLICIES`), the offline gate over a rendered plan, and the
baseline comparison that catches replacements. `policies/` in the repository only assembles."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    # Lazy: `pairedbus.plans.baseline` needs no pulumi_policy (and its gRPC) import.
    if name == "POLICIES":
        from pairedbus.policy.pack import POLICIES

        return POLICIES
    raise AttributeError(name)


__all__ = ["POLICIES"]
