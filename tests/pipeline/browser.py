"""A headless Debian chromium driven over the Chrome DevTools Protocol (CDP), for the report test.

Just enough of the protocol: launch with a fresh profile on a free loopback port, attach to the
page, send commands, keep every event (console errors, exceptions, log entries) for the test.
https://chromedevtools.github.io/devtools-protocol/
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import WebSocketException
from websockets.sync.client import connect

from tests.load import guard

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",  # containers often give /dev/shm only 64 MB
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
)
START_TIMEOUT_S = 30.0


#: Set by .ci/run: scripts/bootstrap installs the browser (a system package: only when asked), and
#: the report's browser test must then run rather than skip.
INSTALL_BROWSER = "PAIREDBUS_INSTALL_BROWSER"


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Page:
    def __init__(self, socket: Any) -> None:
        self._socket = socket
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, timeout: float = 30.0, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        message_id = self._next_id
        self._socket.send(json.dumps({"id": message_id, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self._socket.recv(timeout=max(0.1, deadline - time.monotonic())))
            if message.get("id") == message_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_for_event(self, method: str, timeout: float = 30.0) -> dict[str, Any]:
        for event in self.events:
            if event.get("method") == method:
                return event
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self._socket.recv(timeout=max(0.1, deadline - time.monotonic())))
            self.events.append(message)
            if message.get("method") == method:
                return message

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries, as text."""
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                found.append(json.dumps(params.get("exceptionDetails", {}))[:500])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                found.append(params["entry"].get("text", ""))
        return found


@contextmanager
def open_page(profile: Path, width: int, height: int) -> Iterator[Page]:
    """A fresh headless chromium (stopped by its PID at the end) and its one page, `width` px wide."""
    binary = chromium()
    if binary is None:
        missing = (
            "chromium not found: PAIREDBUS_INSTALL_BROWSER=1 scripts/bootstrap installs Debian's chromium (as root)"
        )
        if os.environ.get(INSTALL_BROWSER) == "1":
            raise RuntimeError(missing)  # CI asked for the browser: its absence is a failure, not a skip
        pytest.skip(missing)
    profile.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    port = None
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + guard(START_TIMEOUT_S)
        while not (port_file.exists() and port_file.read_text().strip()):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"chromium did not open its DevTools port (exit code {process.poll()})")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=guard(10)) as response:
            targets = json.load(response)
        page_url = next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page")
        with connect(page_url, max_size=None, open_timeout=guard(10)) as socket:
            page = Page(socket)
            for domain in ("Page", "Runtime", "Log"):
                page.send(f"{domain}.enable")
            page.send(
                "Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False
            )
            yield page
    finally:
        if port is not None:
            _close_browser(port)  # lets chromium stop its own helper processes
        try:
            process.wait(timeout=guard(10))
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(timeout=guard(10))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=guard(10))


def _close_browser(port: int) -> None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/version", timeout=guard(5)) as response:
            url = json.load(response)["webSocketDebuggerUrl"]
        with connect(url, open_timeout=guard(5)) as socket:
            socket.send(json.dumps({"id": 1, "method": "Browser.close"}))
            socket.recv(timeout=guard(5))
    except (OSError, KeyError, TimeoutError, ValueError, WebSocketException):
        pass  # the caller stops the process by its PID
