"""The emulator in a process of its own, driven through its control endpoint.

    with EmulatorProcess(["primary", "secondary"]) as brokers:
        brokers.create_queue("primary", "orders", requires_duplicate_detection=True)
        conn_str = brokers.connection_string("primary")
        brokers.faults("primary", down=True)        # connections refused, open ones cut
        brokers.queue("primary", "orders")["counts"]
        brokers.world(seed=1, fault_rate=0.02)      # server-busy on 2 % of operations
        brokers.entities("primary")["queues"]       # every entity's counts in one request

What a broker in another process proves that one on the test's event loop cannot: the client's
event loop is the client's alone, so timings and CPU are the client's, and a killed or stalled
broker is a real one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pairedbus.emulator.control import CA_LINE, CONTROL_LINE

__all__ = ["EmulatorProcess"]

_SERVE = (sys.executable, "-m", "pairedbus", "emulator", "serve")
#: Bound on the broker's start and stop and on each control request (loopback: milliseconds).
_SECONDS = 30.0


class EmulatorProcess:
    def __init__(self, namespaces: Iterable[str] = ("primary", "secondary")) -> None:
        self.names = list(namespaces)
        self._strings: dict[str, str] = {}
        self.control_url = ""
        #: The CA certificate the administration client trusts (`connection_verify`).
        self.ca_file = ""
        self._process: subprocess.Popen[str] | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

    def start(self) -> EmulatorProcess:
        self._tmp = tempfile.TemporaryDirectory(prefix="pairedbus-emulator-")
        config = Path(self._tmp.name) / "Config.json"
        config.write_text(json.dumps({"UserConfig": {"Namespaces": [{"Name": name} for name in self.names]}}))
        self._process = subprocess.Popen(
            [*_SERVE, "--config", str(config), "--port", "0", "--control-port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert self._process.stdout is not None
        while not self.control_url:
            line = self._process.stdout.readline()
            if not line:
                err = self._process.stderr.read() if self._process.stderr else ""
                self.stop()
                raise RuntimeError(f"the emulator process ended before serving: {err.strip()[-500:]}")
            name, _, value = line.rstrip("\n").partition("\t")
            if name == CONTROL_LINE:
                self.control_url = value
            elif name == CA_LINE:
                self.ca_file = value
            else:
                self._strings[name] = value
        return self

    @property
    def pid(self) -> int:
        assert self._process is not None
        return self._process.pid

    def connection_string(self, name: str) -> str:
        return self._strings[name]

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL if it does not stop; the exit code."""
        process, self._process = self._process, None
        code = None
        if process is not None:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                process.communicate(timeout=_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()
            code = process.returncode
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        return code

    def __enter__(self) -> EmulatorProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- the control endpoint -------------------------------------------------------------------

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.control_url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=_SECONDS) as response:  # the loopback URL the broker printed
                answer: dict[str, Any] = json.loads(response.read())  # control.py answers every request with an object
                return answer
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"{method} {path}: {exc.code} {exc.read().decode(errors='replace')}") from None

    def _path(self, *parts: str) -> str:
        return "/" + "/".join(urllib.parse.quote(p, safe="/") for p in parts)

    def faults(self, namespace: str, **faults: Any) -> dict[str, Any]:
        """`down=True|False`, `busy=[...]`, `latency=seconds`, `drop=True`."""
        return self._call("POST", self._path("namespaces", namespace, "faults"), faults)

    def lose_renewals(self, namespace: str, count: int) -> None:
        """The next `count` renew-lock requests on the namespace find their lock lost."""
        self._call("POST", self._path("namespaces", namespace, "lost-renewals"), {"count": count})

    def heal(self, namespace: str) -> None:
        self._call("POST", self._path("namespaces", namespace, "heal"), {})

    def create_queue(self, namespace: str, name: str, **properties: Any) -> None:
        self._call("PUT", self._path("namespaces", namespace, "queues", name), properties)

    def create_topic(self, namespace: str, name: str, **properties: Any) -> None:
        self._call("PUT", self._path("namespaces", namespace, "topics", name), properties)

    def create_subscription(self, namespace: str, topic: str, name: str, **properties: Any) -> None:
        self._call("PUT", self._path("namespaces", namespace, "topics", topic, "subscriptions", name), properties)

    def queue(self, namespace: str, name: str) -> dict[str, Any]:
        """Counts, active and dead-lettered messages of a queue."""
        return self._call("GET", self._path("namespaces", namespace, "queues", name))

    def subscription(self, namespace: str, topic: str, name: str) -> dict[str, Any]:
        return self._call("GET", self._path("namespaces", namespace, "topics", topic, "subscriptions", name))

    def entities(self, namespace: str, *, messages: bool = False) -> dict[str, Any]:
        """Every queue, topic and subscription of `namespace` in one request: counts and duplicates
        dropped; with `messages`, what each holds (`waiting`) and its dead letters, bodies left out."""
        query = "?messages=true" if messages else ""
        return self._call("GET", self._path("namespaces", namespace, "entities") + query)

    def world(self, **settings: Any) -> dict[str, Any]:
        """Set the model's random faults (`seed`, `fault_rate`, `ambiguous_send_rate`,
        `late_lock_loss_rate`) for every namespace this process serves; with none, read them and
        how many of each fired (`injected`)."""
        if not settings:
            return self._call("GET", "/world")
        return self._call("POST", "/world", settings)

    def health(self) -> dict[str, Any]:
        return self._call("GET", "/health")
