"""The drill's progress: bars on a terminal (sending with rate and ETA, then settling); a line every 10 s when piped."""

import io

from pairedbus.drill.progress import DrillProgress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_nothing_is_drawn_when_piped():
    piped = io.StringIO()
    progress = DrillProgress(10, stream=piped)
    progress.sending(5, "2 parked")
    progress.settling(3, 12)
    progress.finish()
    assert piped.getvalue() == ""


def test_a_terminal_sees_sending_with_its_rate_then_settling():
    terminal = Terminal()
    progress = DrillProgress(10, stream=terminal)
    progress.sending(5, "2 parked · 1 failovers")
    sending = terminal.getvalue()
    assert "sending" in sending and "5/10" in sending and "msg/s" in sending and "2 parked" in sending
    progress.settling(7, 12, "0 parked")
    progress.finish()
    text = terminal.getvalue()
    assert "settling" in text and "7/12" in text
    assert "10/10" in text  # the sending bar is complete once settling starts


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_piped_progress_is_one_line_every_ten_seconds():
    piped = io.StringIO()
    clock = Clock()
    progress = DrillProgress(2000, stream=piped, clock=clock)
    progress.sending(100, "3 parked")
    clock.now += 9.9
    progress.sending(900, "3 parked")
    assert piped.getvalue() == ""  # under ten seconds: nothing yet
    clock.now += 0.1
    progress.sending(1000, "5 parked · 1 failovers")
    clock.now += 5
    progress.settling(1500, 2662, "40 still parked")
    clock.now += 5
    progress.settling(2000, 2662, "12 still parked")
    progress.finish()
    assert piped.getvalue().splitlines() == [
        "sending 1,000/2,000 · 5 parked · 1 failovers · 10 s",
        "settling 2,000/2,662 · 12 still parked · 20 s",
    ]
