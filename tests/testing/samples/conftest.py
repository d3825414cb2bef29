"""Start the samples as soon as collection ends (see test_samples.start)."""

from __future__ import annotations

import pytest


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    from tests.testing.samples.test_samples import start

    start(session.items)


def pytest_sessionfinish(session: pytest.Session) -> None:
    from tests.testing.samples.test_samples import stop

    stop()
