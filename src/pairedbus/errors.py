"""Errors a user can fix: the CLI prints them as one line and exits non-zero, no traceback."""


class UserError(Exception):
    """Bad input: a flag, a file or a config value. The message names it and what was expected."""

    exit_code = 2


def is_retryable(exc: BaseException) -> bool:
    """Whether azure-servicebus says a retry can help. Each of its exception classes sets the flag,
    but the SDK keeps it private (`_retryable`) and branches on it in its own retry policy."""
    return bool(getattr(exc, "_retryable", False))


# Distinct exit codes for the audit's and the exports' hostile inputs (2 is any other bad input).
class NoDataError(UserError):
    """An empty estate, or a date range with no data: nothing to audit."""

    exit_code = 3


class OutputError(UserError):
    """An output that cannot be written (`--out`)."""

    exit_code = 4


class MasterError(UserError):
    """A Spark master URL Spark would not understand (`--master`)."""

    exit_code = 5


class DateRangeError(UserError):
    """A date or a range that cannot be (`--since`, `--until`)."""

    exit_code = 6


class CredentialsError(UserError):
    """No Azure credential could be found, or Azure refused it."""

    exit_code = 7
