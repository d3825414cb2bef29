"""The Azure regions this project knows: name, display name and geography, owned here (no SDK enum).

Sources, as published (read 2026-11-23):
- Microsoft Learn, "Azure regions list" (learn.microsoft.com/azure/reliability/regions-list; source
  MicrosoftDocs/reliability-docs `articles/reliability/regions-list.md`, ms.date 2025-09-23): every
  public region with its programmatic name and geography. Regions it marks "coming soon"
  (denmarkeast) are left out until ARM accepts them.
- Azure SDK for .NET, `Azure.Core.AzureLocation` (Azure/azure-sdk-for-net
  `sdk/core/Azure.Core/src/AzureLocation.cs`): swedensouth ("Sweden South", restricted access, the
  pair of Sweden Central) and the sovereign clouds' regions (Azure Government, Azure China).
- Jio India West / Central: restricted regions of the India geography, as `az account
  list-locations` lists them (and Microsoft's service-availability tables do).
- Retired: Microsoft Cloud Deutschland (germanycentral, germanynortheast) closed on 2021-10-29;
  its customers moved to Germany West Central and Germany North.

The table is a snapshot: Azure opens regions faster than any package is released. A well-formed name
that is not here is refused unless the stack marks it as new (`allowUnknownRegion: true`), and then
deployed with a warning (ARM has the last word); see `regions.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

#: How warnings name this table.
TABLE_NAME: Final = "pairedbus's region table"
#: The date of the newest source the table was checked against (Microsoft Learn's ms.date).
TABLE_AS_OF: Final = "2025-09-23"


#: The clouds a region belongs to, as `az cloud list` names them, and as a line names them for a person.
CLOUD_NAMES: Final[dict[str, str]] = {
    "AzureCloud": "Azure public cloud",
    "AzureUSGovernment": "Azure Government",
    "AzureChinaCloud": "Azure China",
}


@dataclass(frozen=True)
class AzureRegion:
    #: The programmatic name ARM reports (`westus3`).
    name: str
    #: The display name (`West US 3`); ARM accepts it too, in any case and spacing.
    display_name: str
    #: Microsoft's geography (a data-residency boundary): `United States`, `Europe`, `Austria`, ...
    geography: str
    #: The cloud the region belongs to (public Azure unless said otherwise).
    cloud: str = "AzureCloud"


def _public(geography: str, *regions: tuple[str, str]) -> tuple[AzureRegion, ...]:
    return tuple(AzureRegion(name, display, geography) for name, display in regions)


REGIONS: Final[tuple[AzureRegion, ...]] = (
    # --- Americas
    *_public("Brazil", ("brazilsouth", "Brazil South"), ("brazilsoutheast", "Brazil Southeast")),
    *_public("Canada", ("canadacentral", "Canada Central"), ("canadaeast", "Canada East")),
    *_public("Chile", ("chilecentral", "Chile Central")),
    *_public("Mexico", ("mexicocentral", "Mexico Central")),
    *_public(
        "United States",
        ("centralus", "Central US"),
        ("eastus", "East US"),
        ("eastus2", "East US 2"),
        ("northcentralus", "North Central US"),
        ("southcentralus", "South Central US"),
        ("westcentralus", "West Central US"),
        ("westus", "West US"),
        ("westus2", "West US 2"),
        ("westus3", "West US 3"),
    ),
    # --- Europe
    *_public("Austria", ("austriaeast", "Austria East")),
    *_public("Belgium", ("belgiumcentral", "Belgium Central")),
    *_public("Europe", ("northeurope", "North Europe"), ("westeurope", "West Europe")),
    *_public("France", ("francecentral", "France Central"), ("francesouth", "France South")),
    *_public("Germany", ("germanynorth", "Germany North"), ("germanywestcentral", "Germany West Central")),
    *_public("Italy", ("italynorth", "Italy North")),
    *_public("Norway", ("norwayeast", "Norway East"), ("norwaywest", "Norway West")),
    *_public("Poland", ("polandcentral", "Poland Central")),
    *_public("Spain", ("spaincentral", "Spain Central")),
    *_public("Sweden", ("swedencentral", "Sweden Central"), ("swedensouth", "Sweden South")),
    *_public("Switzerland", ("switzerlandnorth", "Switzerland North"), ("switzerlandwest", "Switzerland West")),
    *_public("United Kingdom", ("uksouth", "UK South"), ("ukwest", "UK West")),
    # --- Middle East and Africa
    *_public("Israel", ("israelcentral", "Israel Central")),
    *_public("Qatar", ("qatarcentral", "Qatar Central")),
    *_public("UAE", ("uaecentral", "UAE Central"), ("uaenorth", "UAE North")),
    *_public("South Africa", ("southafricanorth", "South Africa North"), ("southafricawest", "South Africa West")),
    # --- Asia Pacific
    *_public(
        "Australia",
        ("australiacentral", "Australia Central"),
        ("australiacentral2", "Australia Central 2"),
        ("australiaeast", "Australia East"),
        ("australiasoutheast", "Australia Southeast"),
    ),
    *_public("Asia Pacific", ("eastasia", "East Asia"), ("southeastasia", "Southeast Asia")),
    *_public(
        "India",
        ("centralindia", "Central India"),
        ("southindia", "South India"),
        ("westindia", "West India"),
        ("jioindiacentral", "Jio India Central"),
        ("jioindiawest", "Jio India West"),
    ),
    *_public("Indonesia", ("indonesiacentral", "Indonesia Central")),
    *_public("Japan", ("japaneast", "Japan East"), ("japanwest", "Japan West")),
    *_public("Korea", ("koreacentral", "Korea Central"), ("koreasouth", "Korea South")),
    *_public("Malaysia", ("malaysiawest", "Malaysia West")),
    *_public("New Zealand", ("newzealandnorth", "New Zealand North")),
    # --- Sovereign clouds (Azure.Core.AzureLocation): accepted where the subscription's cloud has them
    *(
        AzureRegion(name, display, "US Government", "AzureUSGovernment")
        for name, display in (
            ("usgovarizona", "US Gov Arizona"),
            ("usgoviowa", "US Gov Iowa"),
            ("usgovtexas", "US Gov Texas"),
            ("usgovvirginia", "US Gov Virginia"),
            ("usdodcentral", "US DoD Central"),
            ("usdodeast", "US DoD East"),
        )
    ),
    *(
        AzureRegion(name, display, "China", "AzureChinaCloud")
        for name, display in (
            ("chinaeast", "China East"),
            ("chinaeast2", "China East 2"),
            ("chinaeast3", "China East 3"),
            ("chinanorth", "China North"),
            ("chinanorth2", "China North 2"),
            ("chinanorth3", "China North 3"),
        )
    ),
)

#: Regions ARM once accepted and no longer does: name -> why, for the one-line refusal.
RETIRED: Final[dict[str, str]] = {
    "germanycentral": (
        "Germany Central was a region of Microsoft Cloud Deutschland, closed on 2021-10-29 "
        "(use germanywestcentral or germanynorth)"
    ),
    "germanynortheast": (
        "Germany Northeast was a region of Microsoft Cloud Deutschland, closed on 2021-10-29 "
        "(use germanywestcentral or germanynorth)"
    ),
}
