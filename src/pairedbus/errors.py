"""Errors a user can fix: the CLI prints them as one line and exits non-zero, no traceback."""


class UserError(Exception):
    """Bad input: a flag, a file or a config value. The message names it and what was expected."""

    exit_code = 2


def is_retryable(exc: BaseException) -> bool:
    """Whether azure-servicebus says a retry can help (read through `pairedbus.sdk`)."""
    from pairedbus.sdk import is_retryable as sdk_is_retryable

    return sdk_is_retryable(exc)
