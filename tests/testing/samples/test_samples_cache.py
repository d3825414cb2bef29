"""The samples' download on a fresh machine, where both xdist workers collect at once."""

from __future__ import annotations

import io
import tarfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.testing.samples import test_samples


def _fake_pip_download(calls: list[int]) -> Any:
    """A `subprocess.run` for `pip download -d DIR`: a slow download of a tiny sdist with one sample."""

    def run(cmd: list[str], **kwargs: Any) -> Any:
        calls.append(1)
        time.sleep(0.3)  # long enough for the other worker to arrive meanwhile
        body = b"print('sample')\n"
        info = tarfile.TarInfo("azure-servicebus-0/samples/sync_samples/a.py")
        info.size = len(body)
        with tarfile.open(Path(cmd[cmd.index("-d") + 1]) / "azure-servicebus-0.tar.gz", "w:gz") as tar:
            tar.addfile(info, io.BytesIO(body))
        return type("Done", (), {"returncode": 0, "stderr": ""})()

    return run


def test_two_workers_collecting_at_once_download_once_and_both_find_the_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before the lock, both downloaded and the second os.replace failed ("Directory not empty"): that
    # worker parametrized `sample` as [download] and xdist stopped on the two collections differing.
    monkeypatch.setenv("PAIREDBUS_CACHE_DIR", str(tmp_path))
    calls: list[int] = []
    monkeypatch.setattr(test_samples.subprocess, "run", _fake_pip_download(calls))
    found: list[Any] = []

    def collect() -> None:
        found.append(test_samples.sample_paths())

    workers = [threading.Thread(target=collect) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()

    expected = [test_samples.cache_dir() / "samples" / "sync_samples" / "a.py"]
    assert found == [expected, expected]
    assert len(calls) == 1
