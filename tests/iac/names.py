"""The names resources of a `PairedNamespace` have, from their names before pairedbus 0.2 (when they were fixed:
`primary`, `queue-orders`, `backlog-3`, `syphon-app`, ...). Each is now `<pair>-<part>-...`, the part named after
the pair: `pair` (namespaces, resource groups, private endpoints), `backlog`, `entities`, `syphon`."""

from __future__ import annotations

#: The repository's own program names its one pair `pairedbus` (__main__.py).
PROGRAM_PAIR = "pairedbus"


def program_name(old: str, pair: str = PROGRAM_PAIR) -> str:
    """`primary` -> `pairedbus-pair-primary`, `queue-orders` -> `pairedbus-entities-queue-orders`, ...; a name
    that already starts with the pair's (the hardening's `pairedbus-primary-lock`, new in 0.2) stays as it is."""
    if old.startswith(f"{pair}-"):
        return old
    if old.startswith(("queue-", "topic-", "subscription-")):
        return f"{pair}-entities-{old}"
    if old == "deployer-data-owner":
        return f"{pair}-backlog-{old}"
    if old.startswith(("backlog-", "syphon-")):
        return f"{pair}-{old}"
    return f"{pair}-pair-{old}"
