import io

from pairedbus.drill.progress import ProgressBar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_draws_only_on_a_terminal():
    piped = io.StringIO()
    bar = ProgressBar(10, stream=piped)
    bar.draw(5, "half")
    bar.finish()
    assert piped.getvalue() == ""

    terminal = Terminal()
    bar = ProgressBar(10, stream=terminal)
    bar.draw(5, "half")
    bar.finish()
    assert "[###############...............] 5/10 half" in terminal.getvalue()
    assert terminal.getvalue().endswith("\n")
