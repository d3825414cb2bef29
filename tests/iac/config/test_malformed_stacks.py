"""Stack files a new user could write that the service, ARM or Pulumi itself would refuse: each
is refused here, before anything renders, with exactly one line that names the key path.

Every case goes through the real path `pairedbus plan` takes: the YAML file, Pulumi's key rules,
then the model. Expected limits are the literals their sources state (cited in
`pairedbus/limits.py`): lock 5 s-5 min and duplicate window 20 s-7 days (.NET
AdministrationClientConstants), 50 tags with names <= 512 and values <= 256 characters (ARM tag
docs), resource group names ^[-\\w\\._\\(\\)]+$ up to 90 (ARM common types), 2,000 subscriptions
per topic (Service Bus quotas).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from pairedbus.iac.config import StackConfigError
from tests.iac.config.conftest import read_stack, stack_document

Doc = dict[str, Any]
Mutation = Callable[[Doc], Doc | str]


def _set(key: str, path: str, value: Any) -> Mutation:
    """Set `a.b[0].c` inside config key `key` (path "" sets the key itself)."""

    def mutate(doc: Doc) -> Doc:
        config = doc["config"]
        if not path:
            config[key] = value
            return doc
        node: Any = config[key]
        parts = path.replace("]", "").replace("[", ".").split(".")
        for part in parts[:-1]:
            node = node[int(part)] if part.isdigit() else node[part]
        node[int(parts[-1]) if parts[-1].isdigit() else parts[-1]] = value
        return doc

    return mutate


def _text(edit: Callable[[str], str]) -> Mutation:
    """Edit the stack file's YAML text (for what a document cannot express: duplicate keys)."""
    import yaml

    return lambda doc: edit(yaml.safe_dump(doc, sort_keys=False))


def _rename(old: str, new: str) -> Mutation:
    def mutate(doc: Doc) -> Doc:
        doc["config"] = {(new if k == old else k): v for k, v in doc["config"].items()}
        return doc

    return mutate


def _both(*mutations: Mutation) -> Mutation:
    def mutate(doc: Doc) -> Doc | str:
        result: Doc | str = doc
        for m in mutations:
            assert isinstance(result, dict)
            result = m(result)
        return result

    return mutate


def _premium_prod(doc: Doc) -> Doc:
    return stack_document("prod")


def _drop(key: str, field: str | None = None) -> Mutation:
    """Remove config key `key`, or one field of it."""

    def mutate(doc: Doc) -> Doc:
        if field is None:
            del doc["config"][key]
        else:
            del doc["config"][key][field]
        return doc

    return mutate


_NET = (
    "/subscriptions/6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f/resourceGroups/rg-network-prod-weu/providers/Microsoft.Network"
)
_ZONES = "/subscriptions/6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f/resourceGroups/rg-dns-prod/providers/Microsoft.Network/privateDnsZones"


P = "pairedbus:"
Q0 = "pairedbus:queues[0]"
SUB0 = "pairedbus:topics[0].subscriptions[0]"
TAGS_48 = {f"t{i}": "v" for i in range(48)}

# (id, mutation, key path the one line must name, words the line must contain)
CASES: list[tuple[str, Mutation, str, str]] = [
    # --- Item 3: keys and YAML read the way Pulumi reads them ---------------------------------
    (
        "bare key",
        _rename("pairedbus:backlogQueueCount", "backlogQueueCount"),
        "backlogQueueCount:",
        "could not parse backlogQueueCount as a configuration key",
    ),
    ("key with two colons", _set("pairedbus:a:b", "", 1), "pairedbus:a:b:", "configuration keys should be of the form"),
    (
        "project namespace in the wrong case",
        _rename("pairedbus:production", "pairedBus:production"),
        "pairedBus:production:",
        "did you mean pairedbus:production",
    ),
    (
        "project namespace misspelt",
        _rename("pairedbus:tags", "paireddbus:tags"),
        "paireddbus:tags:",
        "did you mean pairedbus:tags",
    ),
    (
        "unknown key in the project namespace",
        _set("pairedbus:backlogQueueCont", "", 5),
        "pairedbus:backlogQueueCont:",
        "unknown key (did you mean pairedbus:backlogQueueCount?)",
    ),
    (
        "unknown nested key",
        _set(P + "primary", "zoneRedundnt", True),
        "pairedbus:primary.zoneRedundnt:",
        "did you mean zoneRedundant",
    ),
    (
        "duplicate config key",
        _text(lambda t: t.replace("config:\n", "config:\n  pairedbus:backlogQueueCount: 4\n", 1)),
        "pairedbus:backlogQueueCount:",
        "duplicate key",
    ),
    (
        "duplicate nested key",
        _text(
            lambda t: t.replace(
                "    name: contoso-dev-weu\n", "    name: contoso-dev-weu\n    name: contoso-dev-x\n", 1
            )
        ),
        "pairedbus:primary.name:",
        "duplicate key",
    ),
    (
        "legacy and plain form of one key",
        _set("pairedbus:config:production", "", False),
        "pairedbus:config:production:",
        "duplicate key",
    ),
    (
        "non-string config key",
        _text(lambda t: t.replace("config:\n", "config:\n  123: x\n", 1)),
        "123:",
        "could not parse 123",
    ),
    # --- Item 4: strict types ------------------------------------------------------------------
    (
        "bool as a count",
        _set(P + "backlogQueueCount", "", True),
        "pairedbus:backlogQueueCount:",
        "valid integer, got True",
    ),
    (
        "bool as max delivery count",
        _set(P + "queues", "0.maxDeliveryCount", True),
        Q0 + ".maxDeliveryCount:",
        "expected a number",
    ),
    (
        "string as a size",
        _set(P + "queues", "1.maxSizeInMegabytes", "2048"),
        "pairedbus:queues[1].maxSizeInMegabytes:",
        "valid integer",
    ),
    (
        "yes is not a bool in Pulumi's YAML",
        _text(lambda t: t.replace("requiresSession: true", "requiresSession: yes", 1)),
        Q0 + ".requiresSession:",
        "valid boolean",
    ),
    (
        "yes is not a bool at the top level",
        _text(lambda t: t.replace("pairedbus:production: false", "pairedbus:production: on")),
        "pairedbus:production:",
        "valid boolean",
    ),
    ("tag value an integer", _set(P + "tags", "version", 3), "pairedbus:tags.version:", "valid string"),
    (
        "YAML date where a duration is expected",
        _text(lambda t: t.replace("config:\n", "config:\n  pairedbus:maxOutage: 2024-01-01\n", 1)),
        "pairedbus:maxOutage:",
        "ISO 8601 duration",
    ),
    (
        "integer where a duration is expected",
        _set(P + "queues", "0.lockDuration", 60),
        Q0 + ".lockDuration:",
        "valid string",
    ),
    ("tags not a mapping", _set(P + "tags", "", ["environment"]), "pairedbus:tags:", "valid dictionary"),
    # --- Item 4: durations ---------------------------------------------------------------------
    (
        "lock duration over 5 minutes",
        _set(P + "queues", "0.lockDuration", "PT5M1S"),
        Q0 + ".lockDuration:",
        "PT5S to PT5M",
    ),
    (
        "lock duration under 5 seconds",
        _set(P + "topics", "0.subscriptions.0.lockDuration", "PT4S"),
        SUB0 + ".lockDuration:",
        "PT5S to PT5M",
    ),
    (
        "duplicate window over 7 days",
        _set(P + "queues", "1.duplicateDetectionHistoryTimeWindow", "P7DT1S"),
        "pairedbus:queues[1].duplicateDetectionHistoryTimeWindow:",
        "PT20S to P7D",
    ),
    (
        "duplicate window under 20 seconds",
        _set(P + "topics", "0.duplicateDetectionHistoryTimeWindow", "PT19S"),
        "pairedbus:topics[0].duplicateDetectionHistoryTimeWindow:",
        "PT20S to P7D",
    ),
    (
        "time to live under 1 second",
        _set(P + "queues", "0.defaultMessageTimeToLive", "PT0.5S"),
        Q0 + ".defaultMessageTimeToLive:",
        "PT1S to P10675199DT2H48M5.4775807S",
    ),
    (
        "time to live over TimeSpan.MaxValue",
        _set(P + "queues", "0.defaultMessageTimeToLive", "P10675199DT2H48M5.4775808S"),
        Q0 + ".defaultMessageTimeToLive:",
        "PT1S to P10675199DT2H48M5.4775807S",
    ),
    (
        "auto-delete under 5 minutes",
        _set(P + "topics", "0.subscriptions.1.autoDeleteOnIdle", "PT4M59S"),
        "pairedbus:topics[0].subscriptions[1].autoDeleteOnIdle:",
        "PT5M to",
    ),
    ("max outage not a duration", _set(P + "maxOutage", "", "1 hour"), "pairedbus:maxOutage:", "ISO 8601 duration"),
    ("max outage over 7 days", _set(P + "maxOutage", "", "P8D"), "pairedbus:maxOutage:", "PT20S to P7D"),
    # --- Item 4: names ---------------------------------------------------------------------------
    (
        "namespace ending in -SB",
        _set(P + "secondary", "name", "contoso-dev-SB"),
        "pairedbus:secondary.name:",
        "-sb or -mgmt",
    ),
    (
        "namespace ending in -Mgmt",
        _set(P + "primary", "name", "contoso-dev-Mgmt"),
        "pairedbus:primary.name:",
        "-sb or -mgmt",
    ),
    (
        "namespace with an underscore",
        _set(P + "primary", "name", "contoso_dev"),
        "pairedbus:primary.name:",
        "6-50 letters",
    ),
    ("entity name with @", _set(P + "queues", "0.name", "orders@eu"), Q0 + ".name:", "1-260 letters"),
    (
        "subscription ending in a period",
        _set(P + "topics", "0.subscriptions.0.name", "audit."),
        SUB0 + ".name:",
        "1-50 letters",
    ),
    (
        "resource group with #",
        _set(P + "resourceGroups", "primary.name", "rg#dev"),
        "pairedbus:resourceGroups.primary.name:",
        "resource group name pattern",
    ),
    (
        "resource group ending in a period",
        _set(P + "resourceGroups", "secondary.name", "rg-dev."),
        "pairedbus:resourceGroups.secondary.name:",
        "not ending in '.'",
    ),
    (
        "resource group over 90",
        _set(P + "resourceGroups", "primary.name", "r" * 91),
        "pairedbus:resourceGroups.primary.name:",
        "1-90",
    ),
    (
        "one resource group created twice",
        _set(P + "resourceGroups", "secondary.name", "RG-PAIREDBUS-DEV-WEU"),
        "pairedbus:resourceGroups.secondary.create:",
        "case-insensitive",
    ),
    # --- Item 4: regions -------------------------------------------------------------------------
    (
        "location that is no region",
        _set(P + "primary", "location", "mars"),
        "pairedbus:primary.location:",
        "Azure region",
    ),
    # A misspelt but region-shaped name (`northeurop`, `West Mars`) is a warning now: ARM has the last
    # word on regions newer than the table (tests/iac/config/test_regions.py).
    (
        "retired region",
        _set(P + "secondary", "location", "germanycentral"),
        "pairedbus:secondary.location:",
        "Microsoft Cloud Deutschland, closed on 2021-10-29",
    ),
    (
        "syphon location no region",
        _set(P + "syphon", "location", "West-Europe"),
        "pairedbus:syphon.location:",
        "Azure region such as westeurope or West Europe, got 'West-Europe' (did you mean westeurope?)",
    ),
    # --- Item 4: tags ------------------------------------------------------------------------------
    ("48 tags", _set(P + "tags", "", TAGS_48), "pairedbus:tags:", "at most 47 tags"),
    ("tag name of 513", _set(P + "tags", "k" * 513, "v"), "pairedbus:tags.kkkk", "1-512 characters"),
    ("tag value of 257", _set(P + "tags", "owner", "v" * 257), "pairedbus:tags.owner:", "at most 256 characters"),
    ("tag name with a slash", _set(P + "tags", "cost/center", "x"), "pairedbus:tags.cost/center:", "without any of"),
    (
        "tag this project sets",
        _set(P + "tags", "PairedBus-Role", "primary"),
        "pairedbus:tags.PairedBus-Role:",
        "this project's own tag",
    ),
    (
        "tag names equal but for case",
        _set(P + "tags", "Environment", "dev"),
        "pairedbus:tags.Environment:",
        "tag 'environment'",
    ),
    # --- Item 4: forwarding ------------------------------------------------------------------------
    (
        "subscription forwarding to its own topic",
        _set(P + "topics", "0.subscriptions.0.forwardTo", "Events"),
        SUB0 + ".forwardTo:",
        "its own topic 'events'",
    ),
    (
        "cycle through a topic's subscription",
        _both(
            _set(P + "queues", "1.forwardTo", "events"), _set(P + "topics", "0.subscriptions.1.forwardTo", "invoices")
        ),
        "pairedbus:queues[1].forwardTo:",
        "invoices -> events -> events/billing -> invoices",
    ),
    (
        "subscription forwarding nowhere",
        _set(P + "topics", "0.subscriptions.1.forwardTo", "nowhere"),
        "pairedbus:topics[0].subscriptions[1].forwardTo:",
        "got 'nowhere'",
    ),
    (
        "2,001 subscriptions",
        _set(P + "topics", "0.subscriptions", [{"name": f"s{i}"} for i in range(2001)]),
        "pairedbus:topics[0].subscriptions:",
        "at most 2000 subscriptions",
    ),
    # --- Items 7 and 8: duplicates, prod network, deployer -----------------------------------------
    (
        "paired queue without duplicate detection",
        _set(P + "queues", "1.requiresDuplicateDetection", False),
        "pairedbus:queues[1].requiresDuplicateDetection:",
        "paired: false",
    ),
    (
        "duplicate window shorter than the outage",
        _set(P + "topics", "0.duplicateDetectionHistoryTimeWindow", "PT30M"),
        "pairedbus:topics[0].duplicateDetectionHistoryTimeWindow:",
        "at least maxOutage (PT1H)",
    ),
    (
        "window shorter than a raised outage",
        _both(_set(P + "maxOutage", "", "PT2H"), _set(P + "queues", "0.duplicateDetectionHistoryTimeWindow", "PT1H")),
        "pairedbus:queues[0].duplicateDetectionHistoryTimeWindow",
        "at least maxOutage (PT2H)",
    ),
    (
        "prod with public access",
        _both(_premium_prod, _set(P + "primary", "publicNetworkAccess", "Enabled")),
        "pairedbus:primary.publicNetworkAccess:",
        "'Disabled' when production is true",
    ),
    # --- Secure prod by default (issue 11 item 8): private connectivity ---------------------------
    (
        "prod without network",
        _both(_premium_prod, _drop(P + "network")),
        "pairedbus:network:",
        "when primary.publicNetworkAccess is 'Disabled'",
    ),
    (
        "network subnet id of another type",
        _both(_premium_prod, _set(P + "network", "privateEndpointSubnetId", _NET + "/virtualNetworks/vnet-prod-weu")),
        "pairedbus:network.privateEndpointSubnetId:",
        "expected a subnet's ARM id",
    ),
    (
        "network subnet id without a subscription guid",
        _both(
            _premium_prod,
            _set(
                P + "network",
                "syphonInfrastructureSubnetId",
                "/subscriptions/prod/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/s",
            ),
        ),
        "pairedbus:network.syphonInfrastructureSubnetId:",
        "expected a subnet's ARM id",
    ),
    (
        "network DNS zone of another service",
        _both(
            _premium_prod,
            _set(P + "network", "privateDnsZoneId", _ZONES + "/privatelink.blob.core.windows.net"),
        ),
        "pairedbus:network.privateDnsZoneId:",
        "privatelink.servicebus.windows.net",
    ),
    (
        "network field missing",
        _both(_premium_prod, _drop(P + "network", "privateDnsZoneId")),
        "pairedbus:network.privateDnsZoneId:",
        "",
    ),
    (
        "network unknown field",
        _both(_premium_prod, _set(P + "network", "privateEndpointSubnet", "x")),
        "pairedbus:network.privateEndpointSubnet:",
        "",
    ),
    (
        "network with one subnet for both",
        _both(
            _premium_prod,
            _set(
                P + "network",
                "syphonInfrastructureSubnetId",
                _NET + "/virtualNetworks/vnet-prod-weu/subnets/snet-private-endpoints",
            ),
        ),
        "pairedbus:network.syphonInfrastructureSubnetId:",
        "a subnet other than privateEndpointSubnetId",
    ),
    (
        "network on two Standard namespaces",
        _set(P + "network", "", {k: v for k, v in stack_document("prod")["config"][P + "network"].items()}),
        "pairedbus:network:",
        "private endpoints are Premium only",
    ),
    (
        "Standard with public access disabled",
        _set(P + "secondary", "publicNetworkAccess", "Disabled"),
        "pairedbus:secondary.publicNetworkAccess:",
        "private endpoints are Premium only",
    ),
    (
        "deployer principal type in the wrong case",
        _set(P + "deployerPrincipalType", "", "serviceprincipal"),
        "pairedbus:deployerPrincipalType:",
        "'User', 'ServicePrincipal' or 'Group', got 'serviceprincipal' (did you mean 'ServicePrincipal'? the case matters)",
    ),
    (
        "deployer principal type unknown",
        _set(P + "deployerPrincipalType", "", "App"),
        "pairedbus:deployerPrincipalType:",
        "'ServicePrincipal'",
    ),
    # --- Item 4: the syphon's image and size ------------------------------------------------------
    ("blank image", _set(P + "syphon", "image", "   "), "pairedbus:syphon.image:", "blank"),
    (
        "image with upper-case repository",
        _set(P + "syphon", "image", "ghcr.io/Contoso/syphon:1.0"),
        "pairedbus:syphon.image:",
        "container image reference",
    ),
    (
        "image with an empty tag",
        _set(P + "syphon", "image", "ghcr.io/contoso/syphon:"),
        "pairedbus:syphon.image:",
        "container image reference",
    ),
    ("bool as CPU", _set(P + "syphon", "cpu", True), "pairedbus:syphon.cpu:", "expected a number"),
    ("CPU Container Apps does not offer", _set(P + "syphon", "cpu", 3.0), "pairedbus:syphon.cpu:", "0.25"),
]


@pytest.mark.parametrize(("mutation", "key_path", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_stack_is_refused_with_one_line_naming_its_key(write_stack, dev_document, mutation, key_path, words):
    content = mutation(copy.deepcopy(dev_document))
    project = write_stack(content)
    with pytest.raises(StackConfigError) as info:
        read_stack(project)
    problems = info.value.problems
    assert len(problems) == 1, problems
    [line] = problems
    assert "\n" not in line
    assert key_path in line and words in line, line


def test_there_are_at_least_forty_new_malformed_stacks():
    assert len(CASES) >= 40
    assert len({c[0] for c in CASES}) == len(CASES)
