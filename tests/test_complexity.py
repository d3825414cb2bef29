"""No function, method or class in `src/` ranks D or worse in radon's cyclomatic complexity (above 20, the
blocks `radon cc -n D src` lists): past that a function does several jobs, and is split into steps named after
them. The few still above are listed, each with who splits it; a block split leaves the list."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from radon.complexity import cc_rank, cc_visit_ast
from radon.visitors import Class, Function

import pairedbus
from tests.parsing import parse_source

PACKAGE = Path(pairedbus.__file__).parent
#: radon's ranks: A 1-5, B 6-10, C 11-20, D 21-30, E 31-40, F above.
WORST_RANK_ALLOWED = "C"


def _block_name(block: Function | Class) -> str:
    if isinstance(block, Function) and block.is_method:
        return f"{block.classname}.{block.name}"
    return block.name


def complex_blocks(source: str, module: str) -> Iterator[tuple[str, str, int]]:
    """("module:Block", rank, complexity) of every block of `source` ranked worse than `WORST_RANK_ALLOWED`:
    functions, methods and classes, as `radon cc` lists them (a closure counts toward its function)."""
    # parsed here, not by radon: CPython 3.11 can fail a parse spuriously (tests/parsing.py)
    for block in cc_visit_ast(parse_source(source, module)):
        rank = cc_rank(block.complexity)
        if rank > WORST_RANK_ALLOWED:
            yield f"{module}:{_block_name(block)}", rank, block.complexity


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_function_in_src_ranks_worse_than_c() -> None:
    found = {
        name: f"{rank} ({complexity})"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name, rank, complexity in complex_blocks(path.read_text(), _module(path))
    }
    assert found == {}


def _branches(count: int, indent: str = "") -> str:
    """A function of complexity `count + 1`: one `if` per value."""
    body = "".join(f"{indent}    if x == {i}:\n{indent}        return {i}\n" for i in range(count))
    return f"{indent}def f(x):\n{body}{indent}    return -1\n"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (_branches(20), [("m:f", "D", 21)]),
        (_branches(36), [("m:f", "E", 37)]),
        (_branches(41), [("m:f", "F", 42)]),
        ("class K:\n" + _branches(25, "    "), [("m:K.f", "D", 26), ("m:K", "D", 27)]),
    ],
)
def test_a_block_above_c_is_found_and_named(source: str, expected: list[tuple[str, str, int]]) -> None:
    assert sorted(complex_blocks(source, "m")) == sorted(expected)


def test_a_function_of_rank_c_is_not_reported() -> None:
    assert list(complex_blocks(_branches(19), "m")) == []
