"""Every Azure region ARM accepts (issue 19, item 4): the project's own region table, retired regions
refused with the reason, display names normalised, suggestions only within the name's geography; and
(issue 35, item 5) a region-shaped name the table lacks refused with a did-you-mean unless the stack marks
it as new (`allowUnknownRegion: true`, then a warning naming the table), and every region in one cloud."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pairedbus.iac.config import StackConfigError, config_warnings, parse_stack_config
from pairedbus.iac.config import regions as regions_module
from pairedbus.iac.config.region_table import REGIONS, RETIRED
from pairedbus.iac.config.regions import closest_region, is_region_shaped, known_regions, region
from pairedbus.rules.namespace import normalise_region
from tests.iac.config.conftest import stack_document

# The list of current regions the old table (pulumi-azure-native's Azure Migrate enum) refused,
# plus two it names among the current ones.
CURRENT = [
    "westus3",
    "swedensouth",
    "brazilsoutheast",
    "austriaeast",
    "chilecentral",
    "belgiumcentral",
    "indonesiacentral",
    "malaysiawest",
    "spaincentral",
    "italynorth",
]

# Microsoft Learn's long-standing regions (the "Azure regions list"), each still in the table.
LONG_STANDING = """
australiacentral australiacentral2 australiaeast australiasoutheast brazilsouth canadacentral canadaeast
centralindia centralus eastasia eastus eastus2 francecentral francesouth germanynorth germanywestcentral
israelcentral japaneast japanwest koreacentral koreasouth mexicocentral newzealandnorth northcentralus
northeurope norwayeast norwaywest polandcentral qatarcentral southafricanorth southafricawest southcentralus
southindia southeastasia swedencentral switzerlandnorth switzerlandwest uaecentral uaenorth uksouth ukwest
westcentralus westeurope westindia westus westus2
""".split()


@pytest.fixture(scope="module")
def values() -> dict[str, Any]:
    """The dev stack's `pairedbus:` config, keys without the prefix."""
    config = stack_document("dev")["config"]
    return {k.removeprefix("pairedbus:"): v for k, v in config.items() if k.startswith("pairedbus:")}


def _with_location(values: dict[str, Any], location: str, role: str = "primary") -> dict[str, Any]:
    changed = copy.deepcopy(values)
    changed[role]["location"] = location
    return changed


@pytest.mark.parametrize("name", CURRENT)
def test_the_regions_the_sdk_enum_refused_are_accepted_without_a_warning(values, name) -> None:
    config = parse_stack_config(_with_location(values, name))
    assert config.primary.location == name
    assert config_warnings(config) == []


def test_every_long_standing_region_is_in_the_table() -> None:
    assert set(LONG_STANDING) <= known_regions()
    assert len(known_regions()) == len(REGIONS)  # one entry per name


@pytest.mark.parametrize("name", ["germanycentral", "germanynortheast", "Germany Central", "GermanyNorthEast"])
def test_a_retired_region_is_refused_with_the_reason(values, name) -> None:
    with pytest.raises(StackConfigError) as caught:
        parse_stack_config(_with_location(values, name, role="secondary"))
    [line] = caught.value.problems
    assert line.startswith(f"pairedbus:secondary.location: expected a current Azure region, got {name!r}: ")
    assert "Microsoft Cloud Deutschland, closed on 2021-10-29" in line
    assert "use germanywestcentral or germanynorth" in line


def test_retired_regions_are_not_in_the_table() -> None:
    assert not set(RETIRED) & known_regions()


@pytest.mark.parametrize(
    ("spelling", "name"),
    [
        ("West US 3", "westus3"),
        ("Sweden South", "swedensouth"),
        ("AUSTRIA EAST", "austriaeast"),
        ("  West  Europe ", "westeurope"),
        ("WestEurope", "westeurope"),
        ("South Africa North", "southafricanorth"),
    ],
)
def test_display_names_normalise_to_the_name_arm_reports(values, spelling, name) -> None:
    assert normalise_region(spelling) == name
    assert region(spelling) is not None and region(spelling).name == name
    assert parse_stack_config(_with_location(values, spelling)).primary.location == name


def test_every_display_name_in_the_table_normalises_to_its_name() -> None:
    assert all(normalise_region(r.display_name) == r.name for r in REGIONS)


def test_a_region_shaped_name_the_table_lacks_is_refused_unless_marked_as_new(values) -> None:
    with pytest.raises(StackConfigError) as caught:
        parse_stack_config(_with_location(values, "Denmark East"))
    assert caught.value.problems == [
        "pairedbus:primary.location: expected a region of pairedbus's region table (as of 2025-09-23), got "
        "'denmarkeast'; if it is a region newer than the table, set pairedbus:allowUnknownRegion: true"
    ]
    config = parse_stack_config({**_with_location(values, "Denmark East"), "allowUnknownRegion": True})
    assert config.primary.location == "denmarkeast"  # deployed as ARM's name: ARM decides
    assert config_warnings(config) == [
        "pairedbus:primary.location: 'denmarkeast' is not in pairedbus's region table (as of 2025-09-23); "
        "deploying it anyway, ARM decides whether the region exists"
    ]


def test_a_misspelt_region_is_refused_with_a_suggestion_of_its_geography(values) -> None:
    """`northeurop` passed `plan` with exit 0 (a warning only)."""
    changed = _with_location(values, "northeurop", role="secondary")
    changed["syphon"] = {**changed["syphon"], "location": "West Mars"}
    with pytest.raises(StackConfigError) as caught:
        parse_stack_config(changed)
    assert caught.value.problems == [
        "pairedbus:secondary.location: expected a region of pairedbus's region table (as of 2025-09-23), got "
        "'northeurop' (did you mean northeurope?); if it is a region newer than the table, set "
        "pairedbus:allowUnknownRegion: true",
        "pairedbus:syphon.location: expected a region of pairedbus's region table (as of 2025-09-23), got "
        "'westmars'; if it is a region newer than the table, set pairedbus:allowUnknownRegion: true",
    ]
    warnings = config_warnings(parse_stack_config({**changed, "allowUnknownRegion": True}))
    assert warnings == [
        "pairedbus:secondary.location: 'northeurop' is not in pairedbus's region table (as of 2025-09-23); "
        "deploying it anyway, ARM decides whether the region exists (did you mean northeurope?)",
        "pairedbus:syphon.location: 'westmars' is not in pairedbus's region table (as of 2025-09-23); "
        "deploying it anyway, ARM decides whether the region exists",
    ]


def test_allow_unknown_region_is_a_boolean(values) -> None:
    with pytest.raises(StackConfigError) as caught:
        parse_stack_config({**values, "allowUnknownRegion": "true"})
    [line] = caught.value.problems
    assert line.startswith("pairedbus:allowUnknownRegion: ")


@pytest.mark.parametrize(
    ("role", "location", "line"),
    [
        (
            "secondary",
            "usgovvirginia",
            "pairedbus:secondary.location: expected a region of the primary's cloud, got 'usgovvirginia' "
            "(Azure Government) beside primary.location 'westeurope' (Azure public cloud); a stack deploys "
            "to one cloud",
        ),
        (
            "secondary",
            "China North 3",
            "pairedbus:secondary.location: expected a region of the primary's cloud, got 'chinanorth3' "
            "(Azure China) beside primary.location 'westeurope' (Azure public cloud); a stack deploys to one cloud",
        ),
        (
            "syphon",
            "usgovtexas",
            "pairedbus:syphon.location: expected a region of the primary's cloud, got 'usgovtexas' "
            "(Azure Government) beside primary.location 'westeurope' (Azure public cloud); a stack deploys "
            "to one cloud",
        ),
    ],
)
def test_a_pair_across_clouds_is_refused_in_one_line_naming_both_fields(values, role, location, line) -> None:
    """`westeurope` with `usgovvirginia` passed `plan` with exit 0."""
    changed = copy.deepcopy(values)
    changed[role] = {**changed[role], "location": location}
    with pytest.raises(StackConfigError) as caught:
        parse_stack_config(changed)
    assert caught.value.problems == [line]


def test_a_pair_within_a_sovereign_cloud_is_accepted(values) -> None:
    changed = _with_location(_with_location(values, "usgovvirginia"), "usgovtexas", role="secondary")
    changed["syphon"] = {**changed["syphon"], "location": "usgovarizona"}
    config = parse_stack_config(changed)
    assert (config.primary.location, config.secondary.location) == ("usgovvirginia", "usgovtexas")


@pytest.mark.parametrize("location", ["mars", "west-europe", "eu", "westeurope!", "12east"])
def test_a_name_of_no_region_shape_is_refused(values, location) -> None:
    with pytest.raises(StackConfigError) as caught:
        parse_stack_config(_with_location(values, location))
    [line] = caught.value.problems
    assert line.startswith(
        f"pairedbus:primary.location: expected an Azure region such as westeurope or West Europe, got {location!r}"
    )
    assert not is_region_shaped(location)


@pytest.mark.parametrize(
    ("typed", "suggestion"),
    [
        ("westeurop", "westeurope"),  # a typo in the place: Europe, one edit away
        ("austriawest", "austriaeast"),  # Austria, not Australia
        ("australiawest", "australiaeast"),
        ("swedn south", "swedensouth"),
        ("usgovtexs", "usgovtexas"),  # the sovereign clouds are geographies of their own
        ("mars", None),
        ("westmars", None),
        ("austrieast", "austriaeast"),  # `austri` is one edit from `austria`, three from `australia`
    ],
)
def test_suggestions_stay_within_the_geography(typed, suggestion) -> None:
    assert closest_region(typed) == suggestion


def test_austriaeast_is_never_taken_for_australiaeast(monkeypatch) -> None:
    """Against a table without Austria (the SDK enum's case in the issue), the place `austria` is a
    word of its own, two edits from `australia`: no suggestion rather than another country's region."""
    without_austria = tuple(r for r in REGIONS if r.geography != "Austria")
    monkeypatch.setattr(regions_module, "REGIONS", without_austria)
    regions_module._by_name.cache_clear()
    regions_module._geography_of_place.cache_clear()
    try:
        assert region("austriaeast") is None
        assert is_region_shaped("austriaeast")  # so a warning, never an error
        assert closest_region("austriaeast") is None
        assert closest_region("Australia East 3") == "australiaeast"
    finally:
        regions_module._by_name.cache_clear()  # rebuilt from the real table after the patch is undone
        regions_module._geography_of_place.cache_clear()


def test_regions_come_from_the_projects_own_table():
    # Was: the installed SDK's Azure Migrate enum, which lacks westus3 (issue 19, item 4).
    regions = known_regions()
    assert {"westeurope", "northeurope", "swedencentral", "eastus2", "westus3"} <= regions
    assert len(regions) >= 60


def test_region_spellings_normalise_as_arm_reads_them():
    assert normalise_region("West Europe") == normalise_region(" WestEurope ") == "westeurope"
    assert closest_region("westeurop") == "westeurope"
    assert closest_region("mars") is None
