"""Issue 35: `pairedbus drill --timeout SECONDS` gives a verdict within the caller's bound, sending and
settling included; an honest one ("not settled within the timeout", with the counts it saw)."""

from __future__ import annotations

import argparse
import json
import time

import pytest

from pairedbus.commands import drill
from pairedbus.errors import UserError
from tests.load import guard


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    drill.register(parser.add_subparsers())
    return parser.parse_args(["drill", *argv])


@pytest.mark.parametrize("value", ["0", "-1", "-0.5", "nan", "inf", "1e300", "86401"])
def test_a_bad_timeout_is_a_user_error_naming_the_flag(value: str) -> None:
    with pytest.raises(UserError, match=r"^--timeout: ") as caught:
        drill.config_from(parse("--timeout", value))
    assert "\n" not in str(caught.value)


def test_a_bad_timeout_exits_two_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from pairedbus.cli import main

    assert main(["drill", "--timeout", "nan"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pairedbus: error: --timeout: ")


def test_the_timeout_becomes_the_config() -> None:
    assert drill.config_from(parse("--timeout", "90")).timeout == 90.0  # type: ignore[attr-defined]
    assert drill.config_from(parse()).timeout is None  # type: ignore[attr-defined]


def _pace_sends_over(monkeypatch: pytest.MonkeyPatch, *, seconds: float) -> None:
    """The command's drills pace their sends over `seconds` (a config the command has no flag for)."""
    from datetime import timedelta

    import pairedbus.drill as drill_package

    real = drill_package.run_drill_on_fake
    update = {"min_send_time": timedelta(seconds=seconds)}
    monkeypatch.setattr(
        drill_package, "run_drill_on_fake", lambda config, **kw: real(config.model_copy(update=update), **kw)
    )


def test_a_drill_cut_off_while_sending_gives_its_verdict_within_the_bound(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Paced over a minute, a 5 s bound stops it while sending, however slow the start: what was
    # sent is accounted for, a send the bound interrupted is neither sent nor lost. Syphon kills
    # every 0.3 s of pacing: a kill once swallowed the bound (CI sent 3,000 of 3,000 with a 3 s
    # bound on a 6 s pace).
    _pace_sends_over(monkeypatch, seconds=60)
    started = time.perf_counter()
    code = drill.run(parse("--messages", "3000", "--syphon-restarts", "200", "--timeout", "5", "--json", "-"))
    elapsed = time.perf_counter() - started
    report = json.loads(capsys.readouterr().out)
    # What shows the bound held is the report (timed out, cut off while sending); the wall clock
    # is only a hang guard here: an unbounded drill would pace 60 s and then settle for minutes.
    assert elapsed < guard(50), elapsed
    assert code == 1
    assert report["timed_out"] is True and report["settled"] is False and report["ok"] is False
    assert 0 < report["sent"] < 3000
    assert report["syphon_kills"] > 0
    assert report["lost"] == 0, report["examples"]
    assert report["delivered"] + report["dead_lettered"] + report["not_yet_delivered"] == report["expected_deliveries"]


def test_a_drill_cut_off_while_settling_says_not_settled_within_the_timeout(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # No syphon: what the outages parked stays parked, and settling would wait its ten minutes.
    from pairedbus.drill import run as drill_run

    async def no_syphon(self: object, stop: object) -> None:
        await stop.wait()  # type: ignore[attr-defined]

    monkeypatch.setattr(drill_run.RestartingSyphon, "_run", no_syphon)
    _pace_sends_over(monkeypatch, seconds=1)
    started = time.perf_counter()
    code = drill.run(parse("--messages", "200", "--outages", "1", "--syphon-restarts", "0", "--timeout", "4"))
    elapsed = time.perf_counter() - started
    out, err = capsys.readouterr()
    # The bound is the behaviour here, but a wall clock is not a verdict on a busy machine (5.0 s at load 15
    # on 2 cores): within the bound when idle, stretched with the load (tests/load.py) when not.
    assert elapsed <= guard(4.0), elapsed
    assert code == 1
    line = out.splitlines()[0]
    assert line.startswith("FAIL (not settled within the timeout)  sent 200 · delivered "), line
    assert "· lost 0 ·" in line and "not yet delivered " in line and "(still parked: " in line, line
    assert "not settled within the timeout" in err


def test_the_reserve_for_the_end_grows_with_what_the_audit_must_read() -> None:
    # The harsh drill at 0.9/0.9 left 193,129 copies in the backlog; auditing them took seconds (80,270
    # took 4.6 s), and its verdict came 3.5 s after a 300 s bound that kept a fixed 3 s for the end.
    from pairedbus.drill.run import AUDIT_SECONDS_PER_MESSAGE, Bound

    bound = Bound.starting(time.perf_counter(), 300.0)
    assert bound.work_left(waiting=0) == pytest.approx(297.0, abs=0.1)
    assert bound.work_left(waiting=200_000) == pytest.approx(297.0 - 200_000 * AUDIT_SECONDS_PER_MESSAGE, abs=0.1)
    assert 80_270 * AUDIT_SECONDS_PER_MESSAGE >= 4.6 * 1.5  # what the audit of 80,270 took, with a margin
