"""The unmodified `@azure/service-bus` from npm (pinned in node/package-lock.json) against the
emulator over loopback: send (single and batch), receive, complete, abandon, dead-letter with a
reason, defer, settlement by lock token through `$management`, renew-lock, peek,
receive-and-delete, schedule and cancel, sessions (named and next available, state, renewal), a
topic subscription, a message larger than a frame, and the error codes the client raises for what
the broker refuses.

node/scenario.mjs does the client's side and prints one JSON line; this test starts the emulator,
runs it and checks what the client saw and what the model holds afterwards. The packages are
installed once with `npm ci` into `~/.cache/pairedbus/node-<hash of the lock>` (or under
`$PAIREDBUS_CACHE_DIR`); nothing downloaded lands in the repository.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from pairedbus.emulator.codec import UInt
from pairedbus.emulator.frames import AMQP_HEADER, Code, encode_frame
from pairedbus.emulator.running import emulator_thread
from tests.load import guard

NODE_DIR = Path(__file__).with_name("node")
SCENARIO = NODE_DIR / "scenario.mjs"
#: Bounds: `npm ci` of 77 packages from the registry, and the scenario (about 2 s on loopback; a
#: `$management` round trip waits ~40 ms on Nagle's algorithm in the client).
NPM_SECONDS = 300
SCENARIO_SECONDS = 120
#: Set by .ci/run: without node and npm the test fails instead of skipping.
REQUIRE_NODE = "PAIREDBUS_REQUIRE_NODE"


def cache_root() -> Path:
    return Path(
        os.environ.get("PAIREDBUS_CACHE_DIR")
        or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pairedbus")
    )


def node_modules() -> Path:
    """The installed packages of node/package-lock.json, installed on first use. Both xdist
    workers may get here at once on a fresh machine: the install runs under a lock on the cache
    directory, into a temporary directory renamed into place, and whoever comes second finds it."""
    lock = (NODE_DIR / "package-lock.json").read_bytes()
    target = cache_root() / f"node-{hashlib.sha256(lock).hexdigest()[:16]}"
    installed = target / "node_modules" / "@azure" / "service-bus"
    if installed.is_dir():
        return target / "node_modules"
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        if not installed.is_dir():
            _npm_ci(target)
    return target / "node_modules"


def _npm_ci(target: Path) -> None:
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        for name in ("package.json", "package-lock.json"):
            shutil.copy(NODE_DIR / name, Path(tmp) / name)
        cmd = ["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"]
        done = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=guard(NPM_SECONDS))
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed (offline?): {done.stderr.strip()[-800:]}")
        shutil.rmtree(target, ignore_errors=True)  # a half-made one from an interrupted run
        os.replace(tmp, target)
        os.mkdir(tmp)  # for TemporaryDirectory's cleanup


def run_scenario(conn_str: str, modules: Path) -> dict:
    """Run the scenario where Node resolves its imports from the cache (NODE_PATH does not apply to ES modules): the
    script is copied into a directory of this run's own, beside a link to the installed node_modules, so that two
    checkouts running side by side (sharing the cache) never run each other's copy."""
    with tempfile.TemporaryDirectory(prefix="pairedbus-node-") as here:
        script = Path(here) / SCENARIO.name
        shutil.copy(SCENARIO, script)
        (Path(here) / "node_modules").symlink_to(modules, target_is_directory=True)
        env = {**os.environ, "PAIREDBUS_CONNECTION_STRING": conn_str}
        env.pop("DEBUG", None)
        done = subprocess.run(
            ["node", str(script)],
            cwd=here,
            env=env,
            capture_output=True,
            text=True,
            timeout=guard(SCENARIO_SECONDS),
        )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0 and lines, f"node exited {done.returncode}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    return json.loads(lines[-1])


@pytest.mark.slow
@pytest.mark.timeout(NPM_SECONDS + SCENARIO_SECONDS + 60)
def test_the_node_client_over_the_wire() -> None:
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        reason = f"{' and '.join(missing)} not on PATH (the project's machines have Node 20 and npm)"
        if os.environ.get(REQUIRE_NODE) == "1":
            pytest.fail(reason)  # .ci/run requires the second client: its absence is a failure, not a skip
        pytest.skip(reason)
    modules = node_modules()
    with emulator_thread(["primary"]) as runner:
        ns = runner.emulator.namespace("primary")
        runner.call(
            lambda: (
                ns.create_queue("orders"),
                ns.create_queue("sessions", requires_session=True),
                ns.create_topic("events"),
                ns.create_subscription("events", "all"),
            )
        )
        result = run_scenario(runner.connection_string("primary"), modules)

        def model() -> dict:
            orders = ns.queue("orders")
            dead = orders.store_for("deadletter").all_records(runner.emulator.world.clock.time())
            return {
                "orders": orders.message_counts(),
                "sessions": ns.queue("sessions").message_counts(),
                "subscription": ns.subscription("events", "all").message_counts(),
                "dead": sorted((r.content.message_id, r.dl_reason, r.dl_description) for r in dead),
                "operations": dict(runner.emulator.world.operations),
            }

        state = runner.call(model)

    assert result["error"] is None, result["error"]
    steps = result["steps"]
    assert steps["send"] == {"batch": 2}

    hello = steps["complete"]
    assert (hello["body"], hello["messageId"], hello["subject"]) == ("hello", "m-1", "greeting")
    assert hello["applicationProperties"] == {"n": 7, "s": "x"}
    assert (hello["sequenceNumber"], hello["deliveryCount"], hello["hasLockToken"]) == (1, 0, True)
    assert hello["enqueued"] < hello["lockedUntil"]

    first, again = steps["abandon"]["first"], steps["abandon"]["again"]
    assert (first["body"], again["body"]) == ("b1", "b1")
    assert (first["deliveryCount"], again["deliveryCount"]) == (0, 1)

    dlq = steps["deadLetterQueue"]
    assert (dlq["body"], dlq["deadLetterReason"], dlq["deadLetterErrorDescription"]) == ("b2", "bad", "it was bad")

    deferred = steps["deferThenDeadLetter"]
    assert deferred["received"]["sequenceNumber"] == deferred["deferred"]["sequenceNumber"]
    assert deferred["received"]["body"] == "d1"
    assert steps["completeAfterClose"]["renewedLater"] is True
    assert steps["peekAndReceiveAndDelete"] == {"peeked": ["p1", "p2"], "received": ["p1", "p2"]}
    assert len(steps["schedule"]["sequenceNumbers"]) == 2

    sessions = steps["sessions"]
    assert sessions["named"]["sessionId"] == "b" and sessions["named"]["message"]["body"] == "s-b"
    assert sessions["named"]["state"] == "seen" and sessions["renewed"] is True
    assert sessions["next"]["sessionId"] == "a" and sessions["next"]["message"]["body"] == "s-a"

    assert steps["topic"]["body"] == "e1"
    assert steps["large"] == {"length": 200_000, "same": True}
    # What the client raises for what the broker says (ServiceBusError.code).
    assert steps["errors"] == {
        "missing": "MessagingEntityNotFound",
        "wrongKey": "UnauthorizedAccess",
        "tooLarge": "MessageSizeExceeded",
        "noSession": "ServiceTimeout",
        "cancelTwice": "MessageNotFound",
    }

    # What the model holds: both dead letters with their reasons (one settled on the link, one by
    # lock token through $management), one scheduled message left after the cancel, all else gone.
    assert state["dead"] == [("b2", "bad", "it was bad"), ("d1", "deferred-bad", "by lock token")]
    counts = state["orders"]
    assert (counts["active"], counts["deferred"], counts["scheduled"], counts["dead_letter"]) == (0, 0, 1, 2)
    assert state["sessions"]["active"] == state["subscription"]["active"] == 0
    ops = state["operations"]
    # the deferred message's dead-letter and the complete after its receiver closed
    assert ops["update-disposition"] == 2
    for name in ("receive-by-sequence-number", "renew-lock", "peek-message"):
        assert ops[name] == 1, name
    assert (ops["schedule-message"], ops["cancel-scheduled-message"]) == (2, 3)
    assert ops["set-session-state"] == ops["get-session-state"] == ops["renew-session-lock"] == 1


def test_the_broker_sends_heartbeats_within_a_clients_idle_timeout() -> None:
    """Node's client opens with idle-timeout 60000 and closes a connection that stays silent that
    long: the broker sends empty frames at half the client's timeout (here 200 ms, not a minute)."""
    with (
        emulator_thread(["primary"]) as runner,
        socket.create_connection(("127.0.0.1", runner.emulator.broker("primary").port), timeout=guard(5)) as sock,
    ):
        sock.sendall(AMQP_HEADER + encode_frame(0, Code.OPEN, ["client", "localhost", None, None, UInt(400)]))
        buffer = b""
        start = time.monotonic()
        frames: list[bytes] = []
        while len(frames) < 3 and time.monotonic() - start < guard(5):
            buffer += sock.recv(4096)
            if buffer.startswith(AMQP_HEADER):
                buffer = buffer[len(AMQP_HEADER) :]
            while len(buffer) >= 8:
                (size,) = struct.unpack(">I", buffer[:4])
                if len(buffer) < size:
                    break
                frames.append(buffer[:size])
                buffer = buffer[size:]
        elapsed = time.monotonic() - start
    opened, *beats = frames
    assert opened[8:11] == b"\x00\x53" + bytes((Code.OPEN,))
    assert beats == [struct.pack(">IBBH", 8, 2, 0, 0)] * 2
    # Within a second when idle (two beats 200 ms apart), stretched on a busy machine: still far below the
    # half minute a broker that ignored the client's idle timeout would wait.
    assert elapsed < guard(1.0)


def test_the_scenario_runs_from_a_copy_of_its_own_beside_the_shared_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before, it was copied into the shared cache beside node_modules: two checkouts side by side (another branch's
    # scenario) ran whichever copy was written last.
    modules = tmp_path / "cache" / "node-x" / "node_modules"
    modules.mkdir(parents=True)
    seen: dict[str, object] = {}

    def node(cmd: list[str], *, cwd: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
        script = Path(cmd[1])
        seen.update(text=script.read_bytes(), parent=script.parent, linked=(script.parent / "node_modules").resolve())
        return subprocess.CompletedProcess(cmd, 0, stdout='{"ok": true}\n', stderr="")

    monkeypatch.setattr(subprocess, "run", node)
    assert run_scenario("Endpoint=sb://x/", modules) == {"ok": True}
    assert seen["text"] == SCENARIO.read_bytes()
    assert seen["linked"] == modules.resolve()
    assert not list(modules.parent.glob("*.mjs"))  # nothing written into the shared cache
