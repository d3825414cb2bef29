"""`pairedbus drill --wire`: the same drill against two emulated namespaces in processes of their own,
with the unmodified SDK; a flag the wire cannot honour is refused in one line before anything starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pairedbus.commands import drill
from tests.load import guard


def test_a_round_trip_is_refused_on_the_wire_in_one_line_before_any_emulator_starts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pairedbus.drill.wire as wire
    from pairedbus.cli import main

    def must_not_run(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the wire drill started")

    monkeypatch.setattr(wire, "run_drill_on_wire", must_not_run)
    monkeypatch.setattr(wire.EmulatorProcess, "start", must_not_run)
    assert main(["drill", "--wire", "--rtt-ms", "5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pairedbus: error: --rtt-ms: not with --wire: "), err


def test_every_other_flag_is_taken_by_the_wire_drill() -> None:
    from pairedbus.drill.wire import WIRE_REFUSALS, refusal

    argv = ["--messages", "7", "--entities", "4", "--backlog-queues", "2", "--outages", "3", "--fault-rate", "0.3"]
    argv += ["--ambiguous-send-rate", "0.5", "--late-lock-loss-rate", "0.5", "--syphon-restarts", "5"]
    argv += ["--seed", "9", "--timeout", "60", "--rtt-ms", "0"]
    parser = __import__("argparse").ArgumentParser()
    drill.register(parser.add_subparsers())
    args = parser.parse_args(["drill", "--wire", *argv])
    assert args.wire is True
    assert refusal(drill.config_from(args)) is None
    assert set(WIRE_REFUSALS) == {"rtt_ms"}  # the one flag refused: each other one works on the wire


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_small_wire_drill_loses_doubles_and_alters_nothing_with_every_fault_on_the_wire(tmp_path: Path) -> None:
    # Outages (the primary's broker refusing and cutting connections), server-busy answers, ambiguous
    # sends (stored, then the connection cut), late lock losses and a syphon kill (the task cancelled,
    # the secondary's connections cut), all through the emulators' control endpoints. The drill's
    # promise holds whatever the verdict: nothing lost, doubled or altered, every expected delivery
    # accounted for. The verdict itself is not asserted: today the wire still shows sends reaching the
    # caller and the syphon dead-lettering as refused what its own client failed (docs/drill.md); the
    # bound keeps a send stuck in the SDK (one took 300 s) from holding the suite.
    from pairedbus.cli import main

    out = tmp_path / "report.json"
    argv = ["drill", "--wire", "--messages", "60", "--outages", "1", "--syphon-restarts", "1", "--seed", "2"]
    # The drill's own bound stretches with the load: cut off at 150 s on a busy machine (load 25-37, 175 s), it
    # ended before its outage dropped a connection, and the counts below were of a drill that had not run its plan.
    code = main([*argv, "--timeout", f"{guard(150):.0f}", "--json", str(out)])
    report = json.loads(out.read_text())
    assert report["world"] == "wire"
    assert code == (0 if report["ok"] else 1)
    assert report["lost"] == report["duplicates"] == 0, report["examples"]
    assert report["property_mismatches"] == report["unexpected"] == 0, report["examples"]
    accounted = report["delivered"] + report["dead_lettered"] + report["not_yet_delivered"]
    assert accounted == report["expected_deliveries"]
    assert report["outages"] == 1 and report["syphon_kills"] == 1 and report["connections_dropped"] > 0
