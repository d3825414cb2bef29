"""docs/testing.md's examples run as written in a platform team's own project (issue 36 item 5: the
fake's example failed there until pytest-asyncio was put in auto mode, which this repository's
configuration hides).

Each example that is a test module is copied out of the page into an empty directory, with no
configuration of this repository (no conftest, no `asyncio_mode`), and run by pytest there."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.load import guard

DOC = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


def _test_modules() -> list[str]:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)
    return [block for block in blocks if re.search(r"^(async )?def test_", block, flags=re.MULTILINE)]


def test_the_page_holds_the_fake_and_the_pulumi_examples() -> None:
    modules = _test_modules()
    assert len(modules) == 2
    assert "mock_servicebus" in modules[0] and "run_program" in modules[1]


@pytest.mark.slow
def test_every_example_passes_in_a_fresh_project(tmp_path: Path) -> None:
    for index, module in enumerate(_test_modules()):
        (tmp_path / f"test_example_{index}.py").write_text(module, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # the user's own, empty configuration
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-W", "ignore::DeprecationWarning"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=guard(600),
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and "skipped" not in result.stdout, result.stdout[-1000:]
