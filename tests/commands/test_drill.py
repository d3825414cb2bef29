import argparse
import json
from datetime import timedelta

import pytest

from pairedbus.commands import drill
from pairedbus.errors import UserError


@pytest.fixture(autouse=True)
def sends_paced_over_one_second(monkeypatch):
    """These drills are read for the command's exit code and output, not for pacing: their sends are paced over
    one second (as in test_run.py and test_faults.py) instead of the default six, which the tests only waited out."""
    import pairedbus.drill as drill_package

    real = drill_package.run_drill_on_fake
    monkeypatch.setattr(
        drill_package,
        "run_drill_on_fake",
        lambda config, **kw: real(config.model_copy(update={"min_send_time": timedelta(seconds=1)}), **kw),
    )


def parse(*argv):
    parser = argparse.ArgumentParser()
    drill.register(parser.add_subparsers())
    return parser.parse_args(["drill", *argv])


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--messages", "0"], "--messages"),
        (["--fault-rate", "1.5"], "--fault-rate"),
        (["--fault-rate", "-0.1"], "--fault-rate"),
        (["--entities", "0"], "--entities"),
        (["--backlog-queues", "0"], "--backlog-queues"),
        (["--outages", "-1"], "--outages"),
        (["--syphon-restarts", "-2"], "--syphon-restarts"),
        (["--rtt-ms", "-5"], "--rtt-ms"),
    ],
)
def test_bad_flags_are_user_errors_naming_the_flag(argv, flag):
    with pytest.raises(UserError, match=f"^{flag}:"):
        drill.config_from(parse(*argv))


def test_flags_become_the_config():
    config = drill.config_from(parse("--messages", "10", "--fault-rate", "0.5", "--seed", "3", "--outages", "0"))
    assert (config.messages, config.fault_rate, config.seed, config.outages) == (10, 0.5, 3, 0)


def test_an_unwritable_json_is_refused_before_the_drill(tmp_path, monkeypatch):
    import pairedbus.drill as drill_package

    def must_not_run(_config, **_):
        raise AssertionError("the drill ran before --json was checked")

    monkeypatch.setattr(drill_package, "run_drill_on_fake", must_not_run)
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match=r"^--json .*: not writable"):
        drill.run(parse("--messages", "5", "--json", str(tmp_path / "file" / "r.json")))


def test_the_verdict_comes_first_then_the_short_table(capsys):
    code = drill.run(parse("--messages", "30", "--outages", "0", "--syphon-restarts", "0", "--fault-rate", "0"))
    lines = capsys.readouterr().out.splitlines()
    assert code == 0
    assert lines[0].startswith("PASS  sent 30 · delivered ") and lines[0].endswith("lost 0 · duplicated 0")
    assert any(line.strip().endswith("copies dropped by the destinations' duplicate detection") for line in lines)
    assert all(not line.endswith(" ") for line in lines)


def test_json_dash_prints_the_report_instead(capsys):
    code = drill.run(parse("--messages", "20", "--outages", "0", "--syphon-restarts", "0", "--json", "-"))
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["sent"] == 20 and report["ok"] is True


def test_every_report_field_is_documented():
    from dataclasses import fields
    from pathlib import Path

    from pairedbus.drill.report import DrillReport

    doc = (Path(__file__).resolve().parents[2] / "docs" / "drill.md").read_text()
    for name in [f.name for f in fields(DrillReport)] + ["ok"]:
        assert f"`{name}`" in doc, name


def test_a_tiny_drill_writes_its_report_and_exits_zero(tmp_path, capsys):
    out = tmp_path / "report.json"
    code = drill.run(
        parse("--messages", "30", "--outages", "0", "--syphon-restarts", "0", "--fault-rate", "0", "--json", str(out))
    )
    report = json.loads(out.read_text())
    assert code == 0 and report["ok"] is True
    for key in (
        "sent",
        "delivered",
        "lost",
        "duplicates",
        "dead_lettered",
        "backlogged",
        "pings",
        "property_mismatches",
        "failovers",
        "wall_seconds",
    ):
        assert key in report
    assert report["sent"] == 30


def test_a_failed_drill_exits_one_and_says_why(monkeypatch, capsys):
    import pairedbus.drill as drill_package
    from pairedbus.drill.scenario import DrillConfig

    real = drill_package.run_drill_on_fake

    def sabotaged(config: DrillConfig, **kw):
        return real(config.model_copy(update={"sabotage_consumer_every": 3}), **kw)

    monkeypatch.setattr(drill_package, "run_drill_on_fake", sabotaged)
    code = drill.run(parse("--messages", "30", "--outages", "0", "--syphon-restarts", "0", "--fault-rate", "0"))
    assert code == 1
    assert "lost" in capsys.readouterr().err
