"""Azure regions: what a `location` may say, checked against this project's own table (`region_table.py`).

ARM accepts a location as its name (`westus3`) or display name (`West US 3`), in any case and spacing;
both normalise to the name: lower case, no spaces. Then:
- a name in the table is accepted;
- a retired name (`germanycentral`) is refused with the reason;
- a name of a region's shape (letters, then digits, holding a compass word such as `east` or
  `central`, as every Azure region name does) that the table lacks is refused with a did-you-mean
  (`unknown_region_problem`: `northeurop` is a typo far more often than a new region) unless the stack
  marks it as new (`allowUnknownRegion: true`): Azure opens regions faster than this package is
  released, and ARM has the last word, so it is then deployed with a *warning* naming the table;
- anything else (`mars`, `west-europe`) is refused.

Every region of a stack is in one cloud (public Azure, Azure Government, Azure China: `AzureRegion.cloud`):
a stack deploys through one provider to one cloud, so `westeurope` beside `usgovvirginia` is refused.

A "did you mean" suggestion is offered only for a close name *in the same geography*: the geography is
read from the name's place (`austria` in `austriaeast`), so `austriaeast` is never taken for
`australiaeast`.
"""

from __future__ import annotations

import difflib
import re
from functools import cache

from pairedbus.iac.config.region_table import CLOUD_NAMES, REGIONS, RETIRED, TABLE_AS_OF, TABLE_NAME, AzureRegion
from pairedbus.rules.namespace import normalise_region

#: The compass words every Azure region name holds, around its place (`south` `africa` `north`).
_DIRECTIONS = "north|south|east|west|central"
_SHAPE = re.compile(r"^[a-z][a-z0-9]{2,49}$")
_PLACE = re.compile(rf"^(?:{_DIRECTIONS})*(?P<place>.*?)(?:{_DIRECTIONS})*\d*$")
_HAS_DIRECTION = re.compile(_DIRECTIONS)

#: Suggestion closeness (difflib ratio) for a name within its geography.
_CUTOFF = 0.75


@cache
def _by_name() -> dict[str, AzureRegion]:
    return {region.name: region for region in REGIONS}


def known_regions() -> frozenset[str]:
    """Every region name in the table (public Azure and the sovereign clouds)."""
    return frozenset(_by_name())


def region(value: str) -> AzureRegion | None:
    """The table's entry for a name or display name, or None."""
    return _by_name().get(normalise_region(value))


def retired_reason(value: str) -> str | None:
    """Why ARM no longer accepts this region, or None when it was never retired."""
    return RETIRED.get(normalise_region(value))


def is_region_shaped(value: str) -> bool:
    """Whether a name could be an Azure region ARM knows and this table does not (yet)."""
    name = normalise_region(value)
    return bool(_SHAPE.match(name) and _HAS_DIRECTION.search(name) and _place(name))


def not_in_table_warning(path: str, value: str) -> str:
    """The warning for a region-shaped name the table lacks: it names the table, and ARM decides."""
    hint = closest_region(value)
    return (
        f"{path}: {normalise_region(value)!r} is not in {TABLE_NAME} (as of {TABLE_AS_OF}); deploying it anyway, "
        "ARM decides whether the region exists" + (f" (did you mean {hint}?)" if hint else "")
    )


def unknown_region_problem(path: str, value: str, marker: str) -> str:
    """The refusal of a region-shaped name the table lacks, with a suggestion of its geography, and how to mark
    a region newer than the table (`marker`: the config key that does)."""
    hint = closest_region(value)
    return (
        f"{path}: expected a region of {TABLE_NAME} (as of {TABLE_AS_OF}), got {normalise_region(value)!r}"
        + (f" (did you mean {hint}?)" if hint else "")
        + f"; if it is a region newer than the table, set {marker}: true"
    )


def cloud_name(entry: AzureRegion) -> str:
    """The cloud a region is in, as a person reads it (`Azure Government`)."""
    return CLOUD_NAMES.get(entry.cloud, entry.cloud)


def _place(name: str) -> str:
    """The place a region name is about: `austria` in `austriaeast`, `us` in `westus3`."""
    match = _PLACE.match(name)
    return match["place"] if match else ""


@cache
def _geography_of_place() -> dict[str, str]:
    return {_place(r.name): r.geography for r in REGIONS}


def _one_edit_apart(a: str, b: str) -> bool:
    """One insertion, deletion, substitution or swap of neighbours (a typo, not another word)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return a == b
    if len(a) == len(b):
        diffs = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(diffs) == 1 or (
            len(diffs) == 2 and diffs[1] == diffs[0] + 1 and a[diffs[0]] == b[diffs[1]] and a[diffs[1]] == b[diffs[0]]
        )
    shorter, longer = sorted((a, b), key=len)
    return any(longer[:i] + longer[i + 1 :] == shorter for i in range(len(longer)))


def _geography(name: str) -> str | None:
    """The geography a name is in: its place's, or the one of a known place a single typo away
    (`europ` -> Europe). A place that is a word of its own (`austria`, two edits from `australia`)
    belongs to no geography of the table."""
    place = _place(name)
    places = _geography_of_place()
    if place in places:
        return places[place]
    if len(place) < 4:  # `us`, `uk`, `uae`: one edit turns any short word into them
        return None
    near = {places[known] for known in places if len(known) >= 4 and _one_edit_apart(place, known)}
    return near.pop() if len(near) == 1 else None


def closest_region(value: str) -> str | None:
    """A close region name in the same geography as `value`, or None."""
    name = normalise_region(value)
    geography = _geography(name)
    if geography is None:
        return None
    candidates = sorted(r.name for r in REGIONS if r.geography == geography and r.name != name)
    matches = difflib.get_close_matches(name, candidates, n=1, cutoff=_CUTOFF)
    return matches[0] if matches else None
