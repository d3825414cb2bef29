"""How the stack config reports what is wrong: one line per problem, each naming its key path,
every problem of a file in one pass, and never more than a screenful."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Final

#: Problems shown before the rest is summarised as "... and K more": enough for any real mistake,
#: bounded for a generated or hostile file.
MAX_REPORTED_PROBLEMS: Final = 30


class StackConfigError(ValueError):
    """A stack config that cannot be deployed; one line per problem, each naming its key path.

    `problems` holds at most MAX_REPORTED_PROBLEMS lines, the last one saying how many more there
    were; `all_problems` holds every one.
    """

    def __init__(self, problems: Iterable[str]) -> None:
        self.all_problems = list(problems)
        self.problems = cap_problems(self.all_problems)
        super().__init__("\n".join(self.problems))


def cap_problems(problems: list[str], limit: int = MAX_REPORTED_PROBLEMS) -> list[str]:
    """The first `limit` problems, then one line counting the rest."""
    if len(problems) <= limit:
        return list(problems)
    return [*problems[:limit], f"... and {len(problems) - limit} more problems (fix these first)"]


def did_you_mean(word: str, candidates: Iterable[str], *, cutoff: float = 0.75) -> str:
    """` (did you mean X?)` for the closest candidate, ignoring case; empty when none is close."""
    by_lower = {c.lower(): c for c in candidates}
    matches = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=cutoff)
    return f" (did you mean {by_lower[matches[0]]}?)" if matches else ""
