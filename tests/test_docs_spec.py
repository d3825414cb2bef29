"""docs/spec/ is the specification, reachable from a checkout: the copy matches the digests its SOURCE.md records,
every file is listed, and where the shared original is present (the maintainers' machines) the copy equals it."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "docs" / "spec"
#: The shared original beside the repository (never needed by the tests: compared only when present).
ORIGIN = REPO.parent.parent / "shared" / "spec"


def _recorded() -> dict[str, str]:
    rows = re.findall(r"^\| \[([\w.-]+\.md)\]\(\1\) \| `([0-9a-f]{64})` \|$", (SPEC / "SOURCE.md").read_text(), re.M)
    return dict(rows)


def test_every_spec_file_is_recorded_with_its_digest() -> None:
    recorded = _recorded()
    assert {"README.md", "paired-namespaces.md", "partitioning.md", "settlement.md"} <= set(recorded)
    assert set(recorded) == {p.name for p in SPEC.glob("*.md")} - {"SOURCE.md"}
    for name, digest in recorded.items():
        assert hashlib.sha256((SPEC / name).read_bytes()).hexdigest() == digest, (
            f"docs/spec/{name} changed: see SOURCE.md"
        )


@pytest.mark.skipif(not ORIGIN.is_dir(), reason="the shared original is not beside this checkout")
def test_the_copy_is_the_shared_original() -> None:
    for original in ORIGIN.glob("*.md"):
        assert (SPEC / original.name).read_bytes() == original.read_bytes(), original.name


def test_the_readme_points_at_the_copy_not_outside_the_repository() -> None:
    readme = (REPO / "README.md").read_text()
    assert "../shared/spec" not in readme
    assert "(docs/spec/)" in readme or "docs/spec/README.md" in readme
