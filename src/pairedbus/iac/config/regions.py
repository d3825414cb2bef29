"""Azure regions, as the installed pulumi-azure-native lists them (none typed here).

Source, read from the package this program deploys with: `pulumi_azure_native.migrate.AzureLocation`,
the Azure Migrate ARM spec's region enum, documented there as "the same as used by Compute API".

ARM accepts a location as its name (`westeurope`) or display name (`West Europe`), in any case;
both normalise to the name: lower case, no spaces. The list lags behind Azure's newest regions
(pulumi-azure-native 3.29 has no `westus3`), so a region newer than the installed SDK is refused
until the SDK is upgraded.
"""

from __future__ import annotations

import difflib
from functools import cache


def normalise_region(value: str) -> str:
    """`West Europe`, `WestEurope`, ` westeurope ` -> `westeurope`."""
    return "".join(value.split()).lower()


@cache
def known_regions() -> frozenset[str]:
    from pulumi_azure_native.migrate import AzureLocation

    return frozenset(normalise_region(member.value) for member in AzureLocation if member.value != "Unknown")


def closest_region(value: str) -> str | None:
    matches = difflib.get_close_matches(normalise_region(value), sorted(known_regions()), n=1, cutoff=0.75)
    return matches[0] if matches else None
