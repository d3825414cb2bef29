"""Ids shared by the exporter tests."""

from __future__ import annotations

SUBSCRIPTION = "00000000-0000-0000-0000-000000000001"


def ns_id(name: str) -> str:
    return f"/subscriptions/{SUBSCRIPTION}/resourceGroups/rg/providers/Microsoft.ServiceBus/namespaces/{name}"
