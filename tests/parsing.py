"""`ast.parse` for the tests that read the source tree (layering, layout, private SDK reads)."""

from __future__ import annotations

import ast

_TRIES = 3


def parse_source(source: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse`, tried again on CPython 3.11's spurious `SystemError: AST constructor recursion
    depth mismatch`: the AST builder's depth counter is shared by the interpreter's threads, and a
    background thread formatting a traceback (3.11 parses the line to place its carets) can trip it
    (python/cpython#106905). A real syntax error is a `SyntaxError` and is never retried."""
    for attempt in range(1, _TRIES + 1):
        try:
            return ast.parse(source, filename)
        except SystemError:
            if attempt == _TRIES:
                raise
    raise AssertionError("unreachable")
