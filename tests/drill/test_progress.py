"""The drill's progress: on a terminal only; sending with rate and ETA, then a settling phase."""

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
