"""Azure's limits (`pairedbus.limits`), checked against the sources they come from: literals from
.NET's AdministrationClientConstants and the ARM/tag docs, and what the installed Azure SDKs
generated from ARM's definitions say; and where the stack config, the fake and the drill meet them."""

from __future__ import annotations

import inspect
import re
from datetime import timedelta

import pytest

from pairedbus import limits


def test_the_arm_models_state_the_same_lock_and_auto_delete_limits():
    """azure-mgmt-servicebus's models are generated from ARM's definitions for the API version
    pulumi-azure-native 3.x uses for servicebus: their docs carry the limits ARM states."""
    from azure.mgmt.servicebus import models

    queue_doc = inspect.getdoc(models.SBQueueProperties) or ""
    assert "The maximum value for LockDuration is 5 minutes" in " ".join(queue_doc.split())
    assert "The minimum duration is 5 minutes" in " ".join(queue_doc.split())


def test_the_arm_models_are_the_api_version_pulumi_azure_native_renders():
    from azure.mgmt.servicebus import _configuration
    from pulumi_azure_native import servicebus

    # Through the package, as a program imports it: importing the submodule itself first leaves the lazily
    # loaded package without `Queue` for every later import in the process (the component's among them).
    pulumi_queue = inspect.getmodule(servicebus.Queue)

    pulumi_version = re.search(r"Uses Azure REST API version (\S+?)\.", inspect.getsource(pulumi_queue))[1]
    mgmt_version = re.search(r'kwargs.pop\("api_version", "([^"]+)"\)', inspect.getsource(_configuration))[1]
    assert pulumi_version == mgmt_version


def test_tag_limits_are_arms():
    # tag-resources, "Limitations": 50 pairs; name 512, value 256; no < > % & \ ? / in names.
    assert (limits.MAX_TAGS_PER_RESOURCE, limits.TAG_NAME_MAX, limits.TAG_VALUE_MAX) == (50, 512, 256)
    assert set(limits.TAG_NAME_FORBIDDEN_CHARACTERS) == set("<>%&\\?/")


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("rg-1", True),
        ("rg_(x).y", True),
        ("rgé", True),
        ("r" * 90, True),
        ("r" * 91, False),
        ("rg!", False),
        ("rg x", False),
    ],
)
def test_resource_group_pattern_is_arms_common_type(name, ok):
    # common-types v6 ResourceGroupNameParameter: ^[-\w\._\(\)]+$, 1..90.
    assert bool(limits.RESOURCE_GROUP_NAME.match(name) and len(name) <= limits.RESOURCE_GROUP_NAME_MAX) is ok


@pytest.mark.parametrize(
    ("image", "ok"),
    [
        ("ghcr.io/contoso/pairedbus-syphon:0.1.0", True),
        ("example.azurecr.io/pairedbus-syphon:1.0.0", True),
        ("localhost:5000/a/b_c__d:latest", True),
        ("syphon", True),
        ("ghcr.io/contoso/syphon@sha256:" + "0" * 64, True),
        ("ghcr.io/contoso/syphon:1.0@sha256:" + "f" * 64, True),
        ("ghcr.io/contoso/Syphon:1", False),
        ("ghcr.io/contoso/syphon:", False),
        ("ghcr.io//syphon", False),
        ("ghcr.io/contoso/syphon:" + "t" * 129, False),
        ("ghcr.io/contoso/syphon@sha256:abc", False),
        (" syphon", False),
    ],
)
def test_image_references_follow_the_distribution_grammar(image, ok):
    assert bool(limits.IMAGE_REFERENCE.match(image)) is ok


def test_duration_limits_are_the_dotnet_administration_client_constants():
    # AdministrationClientConstants.cs: MinimumAllowedTimeToLive = 1 s, Minimum/MaximumLockDuration
    # = 5 s / 5 min, MinimumAllowedAutoDeleteOnIdle = 5 min, duplicate window 20 s .. 7 days.
    assert limits.MIN_TIME_TO_LIVE == timedelta(seconds=1)
    assert (limits.MIN_LOCK_DURATION, limits.MAX_LOCK_DURATION) == (
        timedelta(seconds=5),
        timedelta(minutes=5),
    )
    assert limits.MIN_AUTO_DELETE_ON_IDLE == timedelta(minutes=5)
    assert limits.MIN_DUPLICATE_DETECTION_WINDOW == timedelta(seconds=20)
    assert limits.MAX_DUPLICATE_DETECTION_WINDOW == timedelta(days=7)
    assert (limits.MIN_MAX_DELIVERY_COUNT, limits.MAX_MAX_DELIVERY_COUNT) == (1, 2_147_483_647)


@pytest.mark.parametrize("lock", [timedelta(seconds=4), timedelta(minutes=5, seconds=1)])
def test_the_fake_refuses_a_lock_duration_outside_the_service_limits(lock: timedelta) -> None:
    from pairedbus.servicebus.errors import ErrorKind, ServiceError
    from pairedbus.servicebus.properties import EntitySettings, EntityType

    with pytest.raises(ServiceError, match="lock_duration") as refused:  # the model's own refusal
        EntitySettings(EntityType.QUEUE, {"lock_duration": lock})
    assert refused.value.kind is ErrorKind.BAD_REQUEST  # HTTP 400 on both front-ends


@pytest.mark.parametrize("lock", [timedelta(seconds=5), timedelta(minutes=5)])
def test_the_fake_accepts_the_lock_duration_limits_themselves(lock: timedelta) -> None:
    from pairedbus.servicebus.properties import EntitySettings, EntityType

    assert EntitySettings(EntityType.QUEUE, {"lock_duration": lock}).lock_seconds == lock.total_seconds()


def test_the_drill_locks_its_destinations_for_the_service_minimum_and_its_backlog_for_20_s() -> None:
    # The backlog's 20 s: the syphon renews no lock while a message waits for its session's turn
    # (tests/drill/test_syphon_key_turn_locks.py); at 5 s the harsh drill never settled.
    from pairedbus.drill import world
    from pairedbus.drill.scenario import DrillConfig

    assert world.DESTINATION_LOCK == timedelta(seconds=5)
    assert DrillConfig().backlog_lock_duration == timedelta(seconds=20)
