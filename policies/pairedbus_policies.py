"""The pack's policies; the logic lives in `pairedbus.policy` (importable without a server)."""

from pairedbus.policy.pack import POLICIES

__all__ = ["POLICIES"]
