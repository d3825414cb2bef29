"""The model's behaviours are driven through the in-process front-end (the SDK's own client shapes),
so these tests share its fixtures."""

from tests.testing.conftest import FQDN, Credential, body, client, ns, world

__all__ = ["FQDN", "Credential", "body", "client", "ns", "world"]
