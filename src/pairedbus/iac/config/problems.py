"""How the stack config reports what is wrong: one line per problem, each naming its key path,
every problem of a file in one pass, and never more than a screenful."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Final

#: Problems shown before the rest is summarised as "... and K more" (the CLI's own bound, so a
#: generated or hostile file never floods a terminal or a Pulumi error).
MAX_REPORTED_PROBLEMS: Final = 20


class StackConfigError(ValueError):
    """A stack config that cannot be deployed; one line per problem, each naming its key path.

    `problems` holds every problem (callers that print them bound them, as the CLI does);
    `shown` and the exception's message hold the first MAX_REPORTED_PROBLEMS and a count of the rest.
    """

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.shown))

    @property
    def shown(self) -> list[str]:
        return cap_problems(self.problems)


def cap_problems(problems: list[str], limit: int = MAX_REPORTED_PROBLEMS) -> list[str]:
    """The first `limit` problems, then one line counting the rest."""
    if len(problems) <= limit:
        return list(problems)
    return [*problems[:limit], f"... and {len(problems) - limit} more"]


def did_you_mean(word: str, candidates: Iterable[str], *, cutoff: float = 0.75) -> str:
    """` (did you mean X?)` for the closest candidate, ignoring case; empty when none is close."""
    by_lower = {c.lower(): c for c in candidates}
    matches = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=cutoff)
    return f" (did you mean {by_lower[matches[0]]}?)" if matches else ""
