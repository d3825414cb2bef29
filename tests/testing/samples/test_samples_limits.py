"""A sample's wall-clock limits on a busy machine: the traceback dump that ends a hung sample and the kill both
stretch with the load (tests/load.py), so that a slow sample is not ended as a hung one."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.load import MAX_FACTOR, PIN
from tests.testing.samples import test_samples


class _Finished:
    """A `subprocess.Popen` of a sample that ends at once; records its environment and the timeout it was given."""

    seen: ClassVar[list[tuple[dict[str, str], float | None]]] = []

    def __init__(self, cmd: list[str], *, env: dict[str, str], **kwargs: Any) -> None:
        self.env = env
        self.returncode = 0

    def communicate(self, timeout: float | None = None) -> tuple[str, None]:
        self.seen.append((self.env, timeout))
        return "done\n", None


@pytest.fixture
def loaded(monkeypatch: pytest.MonkeyPatch) -> float:
    """The factor every guard is stretched by pinned to 6 (within MAX_FACTOR), as on a machine with 6 tasks per core."""
    monkeypatch.setenv(PIN, "6")
    monkeypatch.setattr(test_samples.subprocess, "Popen", _Finished)
    _Finished.seen = []
    assert MAX_FACTOR >= 6.0
    return 6.0


def test_a_samples_dump_and_kill_come_at_the_stretched_limit(loaded: float) -> None:
    # Before, the dump (faulthandler's exit=True) came at the idle limit less 2 s: on a busy machine a sample
    # still working at 88 s was ended as hung although its kill was not due before 540 s.
    test_samples._run(Path("send_queue.py"), {})
    ((env, timeout),) = _Finished.seen
    assert timeout == test_samples.LIMIT * loaded
    assert float(env["PAIREDBUS_SAMPLE_DUMP_AFTER"]) == timeout - 2


def test_a_sample_that_serves_forever_is_given_longer_to_get_going(loaded: float) -> None:
    test_samples._run(Path("receive_iterator_queue.py"), {})
    ((env, timeout),) = _Finished.seen
    assert timeout == test_samples.SERVES_FOREVER["receive_iterator_queue.py"][0] * loaded
    assert "PAIREDBUS_SAMPLE_DUMP_AFTER" not in env  # it is killed while waiting, and that is its pass
