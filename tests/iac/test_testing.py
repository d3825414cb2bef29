"""docs/testing.md, "Testing your own Pulumi program": the example runs as written (issue 19, item 7).

The test reads the example from the document itself, so the two cannot drift apart, and runs every test
function it defines, in update and preview mode where it asks for both."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
SECTION = "## Testing your own Pulumi program"


def _example() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) == 1, "the section holds one example"
    return blocks[0]


def _cases() -> list[tuple[str, dict[str, object]]]:
    namespace: dict[str, object] = {}
    exec(compile(_example(), str(DOC), "exec"), namespace)  # our own document's example
    cases = []
    for name, function in namespace.items():
        if not (name.startswith("test_") and callable(function)):
            continue
        marks = getattr(function, "pytestmark", [])
        params = [m.args for m in marks if m.name == "parametrize"]
        if params:
            ((argname, values),) = params
            cases.extend((f"{name}[{v}]", {"function": function, argname: v}) for v in values)
        else:
            cases.append((name, {"function": function}))
    return cases


def test_the_example_is_a_pytest_module_with_tests() -> None:
    names = [name for name, _ in _cases()]
    assert "test_the_pair_is_two_namespaces_in_two_regions[True]" in names  # preview mode
    assert "test_the_pair_is_two_namespaces_in_two_regions[False]" in names  # update mode
    assert len(names) == 5


@pytest.mark.parametrize("case", [c for _, c in _cases()], ids=[name for name, _ in _cases()])
def test_the_documented_example_passes(case: dict[str, object]) -> None:
    function = case.pop("function")
    assert set(case) == set(inspect.signature(function).parameters)  # type: ignore[arg-type]
    function(**case)  # type: ignore[operator]
