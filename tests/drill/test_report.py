"""The drill's verdict: it never says more than the drill saw."""

from __future__ import annotations

import argparse
from dataclasses import fields
from typing import Any

from pairedbus.commands import drill
from pairedbus.drill.report import DrillReport


def report(**overrides: Any) -> DrillReport:
    """A clean report (everything delivered once), with `overrides`."""
    values: dict[str, Any] = {f.name: 0 for f in fields(DrillReport)}
    values.update(sent=2000, expected_deliveries=2662, delivered=2533, dead_lettered=129, settled=True)
    values.update(sending_seconds=6.0, settling_seconds=30.0, wall_seconds=36.0, config={}, examples={})
    values.update(send_failures_by_error={}, first_parked_seconds=[])
    values.update(overrides)
    return DrillReport(**values)


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    drill.register(parser.add_subparsers())
    return parser.parse_args(["drill", *argv])


def test_a_settled_drill_with_nothing_left_passes():
    assert report().ok
    assert drill.verdict(report()).startswith("PASS  ")


def test_messages_still_parked_at_the_settle_limit_fail_as_not_settled():
    # Issue 21: this drill printed PASS with `settled: false` and 897 messages still parked.
    unsettled = report(settled=False, left_in_backlog=897)
    assert not unsettled.ok
    assert "not settled: 897 left in the backlog, 0 left at the destinations" in unsettled.problems()
    line = drill.verdict(unsettled)
    assert line.startswith("FAIL (not settled)  sent 2,000")
    assert line.endswith("left 897 parked, 0 at the destinations")


def test_messages_left_anywhere_mean_not_settled_even_when_the_wait_ended():
    assert not report(left_in_backlog=3).ok
    assert not report(left_at_destinations=2).ok
    assert not report(settled=False).ok


def test_an_unsettled_drill_exits_as_a_failed_one(monkeypatch, capsys):
    import pairedbus.drill as drill_package

    monkeypatch.setattr(
        drill_package, "run_drill_on_fake", lambda _config, **_: report(settled=False, left_in_backlog=5)
    )
    code = drill.run(parse("--messages", "5"))
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out.splitlines()[0].startswith("FAIL (not settled)")
    assert "not settled: 5 left in the backlog" in captured.err


def test_send_failures_are_listed_by_what_raised_them():
    failed = report(send_failures=3, send_failures_by_error={"backlog: NoBacklogQueueError retryable=true": 3})
    assert not failed.ok
    assert any(
        line.endswith(" 3  send failures: backlog: NoBacklogQueueError retryable=true")
        for line in drill.summary_lines(failed)
    )
