"""The limits the config enforces, checked against the sources they come from: literals from
.NET's AdministrationClientConstants and the ARM/tag docs, and what the installed Azure SDKs
generated from ARM's definitions say."""

from __future__ import annotations

import inspect
import re

import pytest

from pairedbus.iac.config import limits
from pairedbus.iac.config.regions import closest_region, known_regions
from pairedbus.rules.namespace import normalise_region


def test_the_arm_models_state_the_same_lock_and_auto_delete_limits():
    """azure-mgmt-servicebus's models are generated from ARM's definitions for the API version
    pulumi-azure-native 3.x uses for servicebus: their docs carry the limits ARM states."""
    from azure.mgmt.servicebus import models

    queue_doc = inspect.getdoc(models.SBQueueProperties) or ""
    assert "The maximum value for LockDuration is 5 minutes" in " ".join(queue_doc.split())
    assert "The minimum duration is 5 minutes" in " ".join(queue_doc.split())


def test_the_arm_models_are_the_api_version_pulumi_azure_native_renders():
    import pulumi_azure_native.servicebus.queue as pulumi_queue
    from azure.mgmt.servicebus import _configuration

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


def test_regions_come_from_the_projects_own_table():
    # Was: the installed SDK's Azure Migrate enum, which lacks westus3 (issue 19, item 4).
    regions = known_regions()
    assert {"westeurope", "northeurope", "swedencentral", "eastus2", "westus3"} <= regions
    assert len(regions) >= 60


def test_region_spellings_normalise_as_arm_reads_them():
    assert normalise_region("West Europe") == normalise_region(" WestEurope ") == "westeurope"
    assert closest_region("westeurop") == "westeurope"
    assert closest_region("mars") is None
