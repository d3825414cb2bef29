"""What a link's address names: an entity, one of its sub-queues, `$cbs` or `$management`.

The Python SDK sends `amqps://host:port/<path>`, Node the bare path; backlog queue names hold
slashes (`contract.backlog_queue_name`), so the path is read by its known suffixes, not split.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass

__all__ = ["Node", "parse_address"]

_SUBSCRIPTION = re.compile(r"^(?P<topic>.+)/subscriptions/(?P<sub>[^/]+)$", re.IGNORECASE)
_SUFFIXES = (
    ("/$transfer/$deadletterqueue", "transferdeadletter"),
    ("/$deadletterqueue", "deadletter"),
)


@dataclass(frozen=True, slots=True)
class Node:
    address: str  # the whole path the client wrote (what a put-token's audience names)
    path: str  # the entity path as the client wrote it, without sub-queue or $management
    entity: str  # queue or topic name
    subscription: str | None
    sub_queue: str | None  # None, "deadletter" or "transferdeadletter"
    management: bool
    cbs: bool


def parse_address(address: str) -> Node:
    path = address
    if "://" in address:
        path = urllib.parse.urlparse(address).path
    path = full = urllib.parse.unquote(path).strip("/")
    if path == "$cbs":
        return Node(full, path, "", None, None, management=False, cbs=True)
    management = path.lower().endswith("/$management")
    if management:
        path = path[: -len("/$management")]
    sub_queue = None
    for suffix, name in _SUFFIXES:
        if path.lower().endswith(suffix):
            path, sub_queue = path[: -len(suffix)], name
            break
    match = _SUBSCRIPTION.match(path)
    if match:
        return Node(full, path, match["topic"], match["sub"], sub_queue, management, cbs=False)
    return Node(full, path, path, None, sub_queue, management, cbs=False)
