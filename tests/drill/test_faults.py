"""The drill's two duplicate-making faults: ambiguous sends and late lock loss (issue 12)."""

import argparse
from datetime import timedelta

import pytest

from pairedbus.commands import drill
from pairedbus.drill import DrillConfig, run_drill_on_fake
from pairedbus.errors import UserError

FAST = {
    "min_send_time": timedelta(seconds=1),
    "ping_interval": timedelta(milliseconds=50),  # through the client's sleep override
    "failover_interval": timedelta(0),
}
FAULTS = {"ambiguous_send_rate": 0.05, "late_lock_loss_rate": 0.05}


def test_ambiguous_sends_and_late_lock_loss_lose_and_double_nothing_with_duplicate_detection() -> None:
    report = run_drill_on_fake(
        DrillConfig(messages=400, outages=1, fault_rate=0.02, syphon_restarts=1, seed=7, **FAULTS, **FAST)
    )
    assert report.ok, report.as_dict()
    assert report.lost == report.duplicates == 0
    assert report.ambiguous_sends > 0 and report.late_lock_losses > 0
    # The repeated sends and moves reached the destinations and were dropped there.
    assert report.duplicates_dropped > 0
    assert report.as_dict()["duplicates_dropped"] == report.duplicates_dropped


def test_without_duplicate_detection_the_same_faults_make_duplicates() -> None:
    report = run_drill_on_fake(
        DrillConfig(
            messages=400,
            outages=1,
            fault_rate=0.0,
            syphon_restarts=0,
            seed=7,
            destination_duplicate_detection=False,
            **FAULTS,
            **FAST,
        )
    )
    assert report.duplicates > 0
    assert report.duplicates_dropped == 0
    assert not report.ok and any("duplicates" in p for p in report.problems())


def test_the_faults_are_on_by_default_at_a_small_rate() -> None:
    config = DrillConfig()
    assert 0 < config.ambiguous_send_rate <= 0.05
    assert 0 < config.late_lock_loss_rate <= 0.05


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--ambiguous-send-rate", "1"], "--ambiguous-send-rate"),
        (["--ambiguous-send-rate", "-0.01"], "--ambiguous-send-rate"),
        (["--late-lock-loss-rate", "2"], "--late-lock-loss-rate"),
    ],
)
def test_bad_fault_rates_are_user_errors_naming_the_flag(argv: list[str], flag: str) -> None:
    parser = argparse.ArgumentParser()
    drill.register(parser.add_subparsers())
    with pytest.raises(UserError, match=f"^{flag}:"):
        drill.config_from(parser.parse_args(["drill", *argv]))


def test_fault_flags_become_the_config() -> None:
    parser = argparse.ArgumentParser()
    drill.register(parser.add_subparsers())
    args = parser.parse_args(["drill", "--ambiguous-send-rate", "0.2", "--late-lock-loss-rate", "0"])
    config = drill.config_from(args)
    assert (config.ambiguous_send_rate, config.late_lock_loss_rate) == (0.2, 0.0)
