"""Start the samples as soon as collection ends (see test_samples.start): in a plain run, or on the one
pytest-xdist worker that tests/scheduling.py hands their module to (each worker collects every test; the others
would run every sample again for nothing). Should the module land elsewhere, its fixture starts them there."""

from __future__ import annotations

import os

import pytest

from tests.scheduling import SAMPLES_WORKER


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly or os.environ.get("PYTEST_XDIST_WORKER", SAMPLES_WORKER) != SAMPLES_WORKER:
        return
    from tests.testing.samples.test_samples import start

    start(session.items)


def pytest_sessionfinish(session: pytest.Session) -> None:
    from tests.testing.samples.test_samples import stop

    stop()
