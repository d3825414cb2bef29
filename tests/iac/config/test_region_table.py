"""The region table's own shape: programmatic names as ARM reports them, display names as Microsoft Learn's
"Azure regions list" writes them, one entry per name, the sovereign clouds apart, retired regions out."""

from __future__ import annotations

import re

from pairedbus.iac.config.region_table import REGIONS, RETIRED, TABLE_AS_OF, AzureRegion


def test_names_are_unique_lower_case_and_the_display_name_without_spaces() -> None:
    names = [r.name for r in REGIONS]
    assert len(names) == len(set(names))
    for region in REGIONS:
        assert re.fullmatch(r"[a-z][a-z0-9]*", region.name), region
        assert region.display_name.replace(" ", "").lower() == region.name, region


def test_entries_as_microsoft_learn_lists_them() -> None:
    by_name = {r.name: r for r in REGIONS}
    assert by_name["westeurope"] == AzureRegion("westeurope", "West Europe", "Europe")
    assert by_name["westus3"] == AzureRegion("westus3", "West US 3", "United States")
    # Azure.Core.AzureLocation (azure-sdk-for-net): restricted, the pair of Sweden Central.
    assert by_name["swedensouth"] == AzureRegion("swedensouth", "Sweden South", "Sweden")


def test_the_sovereign_clouds_are_marked() -> None:
    clouds = {r.cloud for r in REGIONS}
    assert clouds == {"AzureCloud", "AzureUSGovernment", "AzureChinaCloud"}
    by_name = {r.name: r for r in REGIONS}
    assert by_name["usgovvirginia"].cloud == "AzureUSGovernment"
    assert by_name["chinanorth3"].cloud == "AzureChinaCloud"


def test_retired_and_coming_soon_regions_are_not_in_the_table() -> None:
    names = {r.name for r in REGIONS}
    assert set(RETIRED) == {"germanycentral", "germanynortheast"}  # Microsoft Cloud Deutschland, closed 2021-10-29
    assert not names & set(RETIRED)
    assert "denmarkeast" not in names  # "coming soon" in the source
    assert all("2021-10-29" in why for why in RETIRED.values())


def test_the_table_says_how_old_it_is() -> None:
    assert TABLE_AS_OF == "2025-09-23"
