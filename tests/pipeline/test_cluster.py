"""The audit on a real Spark standalone cluster, submitted by `spark-submit` from a driver Python
that has only Python and PySpark: the project goes as `--py-files`, its dependencies as an
`--archives` directory of installed packages (the recipe in docs/audit.md). Issue 14, item 6.

The master and the worker run from the pyspark package on 127.0.0.1, each bounded in time and
stopped by its PID at the end.
"""

from __future__ import annotations

import csv
import importlib.metadata
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from tests.load import guard

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
SAMPLES = REPO / "samples" / "estate"
ENTRY = SRC / "pairedbus" / "commands" / "audit.py"
#: What the audit imports beyond the standard library and PySpark (pyproject's core + audit extra).
DEPENDENCIES = ("pydantic", "plotly", "jinja2")
#: Hang guards, not speed limits: the audit of the sample estate runs some 270 small stages on one executor
#: core while the other test worker runs the Spark suite, four JVMs on two cores. It took about 200 s under
#: load, and a CI rehearsal on a slower day was killed at 240 s in stage 269 with every CSV written.
START_TIMEOUT_S = 90
SUBMIT_TIMEOUT_S = 480

#: pytest-timeout's 300 s (pyproject) would end the test before the submit's own guard.
pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.timeout(START_TIMEOUT_S + SUBMIT_TIMEOUT_S + 120)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def distribution_closure(names: tuple[str, ...]) -> list[importlib.metadata.Distribution]:
    """The installed distributions `names` need, with their required (non-extra) dependencies."""
    from packaging.requirements import Requirement

    seen: dict[str, importlib.metadata.Distribution] = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        dist = importlib.metadata.distribution(name)
        seen[key] = dist
        for text in dist.requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return list(seen.values())


def pack_dependencies(target: Path) -> Path:
    """What `pip install --target deps pydantic plotly jinja2 && tar -czf deps.tar.gz -C deps .` makes,
    from the installed copies (no network)."""
    deps = target / "deps"
    for dist in distribution_closure(DEPENDENCIES):
        for file in dist.files or []:
            if str(file).startswith(".."):
                continue  # scripts outside site-packages
            source = Path(dist.locate_file(file))
            if source.is_file():
                destination = deps / file
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, destination)
    archive = target / "pairedbus-deps.tar.gz"
    with tarfile.open(archive, "w:gz", compresslevel=1) as tar:
        for path in sorted(deps.iterdir()):
            tar.add(path, arcname=path.name)
    return archive


def pack_project(target: Path) -> Path:
    archive = target / "pairedbus.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted((SRC / "pairedbus").rglob("*")):
            if path.is_file() and path.suffix in (".py", ".json", ".typed", ".j2") and "__pycache__" not in path.parts:
                zipped.write(path, path.relative_to(SRC))
    return archive


def bare_python(target: Path) -> Path:
    """A venv with nothing but PySpark (and py4j) on its path: no pydantic, no project."""
    venv = target / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=guard(60))
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    only = target / "only-pyspark"
    only.mkdir()
    import py4j
    import pyspark

    for package in (pyspark, py4j):
        (only / package.__name__).symlink_to(Path(package.__file__).parent)
    (site / "only-pyspark.pth").write_text(str(only) + "\n")
    return python


def wait_for_workers(ui_port: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=guard(2)) as response:
                if json.load(response).get("aliveworkers", 0) >= 1:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise TimeoutError("the Spark worker did not register with the master")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=guard(20))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=guard(20))


def test_spark_submit_from_a_bare_driver_to_a_standalone_cluster(tmp_path: Path) -> None:
    python = bare_python(tmp_path)
    missing = subprocess.run([python, "-I", "-c", "import pydantic"], capture_output=True, text=True)
    assert missing.returncode != 0 and "No module named 'pydantic'" in missing.stderr
    assert subprocess.run([python, "-c", "import pyspark"], timeout=guard(60)).returncode == 0
    deps, project = pack_dependencies(tmp_path), pack_project(tmp_path)

    home = spark_home()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYSPARK", "SPARK"))}
    env.update(
        SPARK_HOME=str(home),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_DAEMON_MEMORY="256m",
        PYSPARK_PYTHON=str(python),
        PYSPARK_DRIVER_PYTHON=str(python),
    )
    port, ui, worker_ui = free_port(), free_port(), free_port()
    master_url = f"spark://127.0.0.1:{port}"
    logs = tmp_path / "logs"
    logs.mkdir()
    spark_class = str(home / "bin" / "spark-class")
    processes: list[subprocess.Popen] = []
    try:
        processes.append(
            subprocess.Popen(
                [
                    *(spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1"),
                    *("--port", str(port), "--webui-port", str(ui)),
                ],
                env=env,
                stdout=(logs / "master.log").open("w"),
                stderr=subprocess.STDOUT,
            )
        )
        processes.append(
            subprocess.Popen(
                [
                    *(spark_class, "org.apache.spark.deploy.worker.Worker", master_url, "--host", "127.0.0.1"),
                    *("--cores", "1", "--memory", "1g", "--webui-port", str(worker_ui)),
                    *("--work-dir", str(tmp_path / "work")),
                ],
                env=env,
                stdout=(logs / "worker.log").open("w"),
                stderr=subprocess.STDOUT,
            )
        )
        wait_for_workers(ui, time.monotonic() + guard(START_TIMEOUT_S))

        out = tmp_path / "out"
        submit = subprocess.run(
            [
                *(str(home / "bin" / "spark-submit"), "--master", master_url),
                *("--driver-memory", "512m", "--executor-memory", "512m", "--conf", "spark.cores.max=1"),
                *("--conf", "spark.sql.shuffle.partitions=2", "--conf", "spark.ui.enabled=false"),
                *("--py-files", str(project), "--archives", f"{deps}#deps"),
                *(str(ENTRY), "--inventory", str(SAMPLES / "inventory"), "--metrics", str(SAMPLES / "metrics")),
                *("--costs", str(SAMPLES / "costs"), "--out", str(out), "--progress", "never"),
            ],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=guard(SUBMIT_TIMEOUT_S),
        )
        (logs / "submit.log").write_text(submit.stdout + submit.stderr)
        assert submit.returncode == 0, submit.stderr[-3000:]
        assert submit.stdout.startswith("audit: 4 namespaces, 2 pairs"), submit.stdout
        with (out / "pairing.csv").open(newline="") as handle:
            pairs = {(r["pair"], r["date"]) for r in csv.DictReader(handle)}
        assert len(pairs) == 8
        assert json.loads((out / "summary.json").read_text())["violations"] == 3
        # The job ran on the cluster's executor, not in local mode.
        assert "app-" in (logs / "master.log").read_text()
    finally:
        for process in reversed(processes):
            stop(process)
