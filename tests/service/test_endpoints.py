"""What the syphon image tells its host: probe paths and the KEDA scale rule."""

from __future__ import annotations

import re

import pytest

from pairedbus.service.endpoints import (
    HEALTH_PATH,
    LIVENESS_PATH,
    READINESS_PATH,
    keda_scale_rule_metadata,
)


def test_probe_paths_are_separate() -> None:
    assert (LIVENESS_PATH, READINESS_PATH, HEALTH_PATH) == ("/livez", "/readyz", "/healthz")


def test_the_scale_rule_matches_every_backlog_queue_of_the_primary_and_nothing_else() -> None:
    metadata = keda_scale_rule_metadata("contoso", "contoso-dr", messages_per_replica=500)
    assert metadata == {
        "namespace": "contoso-dr",
        "queueName": "contoso/x\\-servicebus\\-transfer/(0|[1-9][0-9]*)",
        "useRegex": "true",
        "operation": "sum",
        "messageCount": "500",
        "activationMessageCount": "0",
    }
    # KEDA keeps a queue when the longest match of the expression is the whole name.
    pattern = re.compile(metadata["queueName"])
    assert all(pattern.fullmatch(f"contoso/x-servicebus-transfer/{i}") for i in (0, 7, 12))
    for other in (
        "contoso/x-servicebus-transfer/07",
        "contosox/x-servicebus-transfer/1",
        "orders",
        "contoso-dr/x-servicebus-transfer/1",
    ):
        assert not pattern.fullmatch(other)
    assert all(isinstance(v, str) for v in metadata.values())


def test_the_scale_target_must_be_positive() -> None:
    with pytest.raises(ValueError, match="messages_per_replica"):
        keda_scale_rule_metadata("contoso", "contoso-dr", messages_per_replica=0)
