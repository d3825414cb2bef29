"""Errors a user can fix: the CLI prints them as one line and exits non-zero, no traceback."""


class UserError(Exception):
    """Bad input: a flag, a file or a config value. The message names it and what was expected."""

    exit_code = 2


def is_retryable(exc: BaseException) -> bool:
    """Whether azure-servicebus says a retry can help. Each of its exception classes sets the flag,
    but the SDK keeps it private (`_retryable`) and branches on it in its own retry policy."""
    return bool(getattr(exc, "_retryable", False))
