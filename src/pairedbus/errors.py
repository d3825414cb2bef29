"""Errors a user can fix: the CLI prints them as one line and exits non-zero, no traceback."""

from typing import Final

#: The exit codes every command uses (documented in `pairedbus --help` and the README).
EXIT_OK: Final = 0
EXIT_FINDINGS: Final = 1  # the check found something: policy violation, drift, failed drill
EXIT_USER: Final = 2  # bad input or flags, unwritable output, missing credentials or extras
EXIT_INTERNAL: Final = 3  # a bug: one line, the traceback with --debug
EXIT_INTERRUPTED: Final = 130


class UserError(Exception):
    """Bad input: a flag, a file or a config value. The message names it and what was expected."""

    exit_code = EXIT_USER


def is_retryable(exc: BaseException) -> bool:
    """Whether azure-servicebus says a retry can help (read through `pairedbus.sdk`)."""
    from pairedbus.sdk import is_retryable as sdk_is_retryable

    return sdk_is_retryable(exc)


# Kinds of user error, each named in its one line. All exit with EXIT_USER: one documented code for
# "you can fix this", distinct from findings (1) and from our own bugs (3).
class NoDataError(UserError):
    """An empty estate, or a date range with no data: nothing to audit."""


class OutputError(UserError):
    """An output that cannot be written (`--out`)."""


class MasterError(UserError):
    """A Spark master URL Spark would not understand (`--master`)."""


class DateRangeError(UserError):
    """A date or a range that cannot be (`--since`, `--until`)."""


class CredentialsError(UserError):
    """No Azure credential could be found, or Azure refused it."""
