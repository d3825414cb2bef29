"""Checks of command-line values that several commands share: one line naming the flag, exit 2, before
any work (Spark, Azure) starts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pairedbus.commands.output import check_writable_dir
from pairedbus.errors import CredentialsError, OutputError

T = TypeVar("T")


def check_output_dir(flag: str, out: str) -> None:
    """A local output directory that exists or can be created, and can be written."""
    check_writable_dir(Path(out), flag)


def with_azure_errors(call: Callable[[], T]) -> T:
    """Azure's "no credential" and "credential refused" as one line, writes that fail midway as
    an output error, instead of tracebacks (all user errors: exit 2)."""
    from azure.core.exceptions import ClientAuthenticationError
    from azure.identity import CredentialUnavailableError

    try:
        return call()
    except CredentialUnavailableError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CredentialsError(
            f"no Azure credential found (az login, or AZURE_CLIENT_ID/AZURE_TENANT_ID/...): {first}"
        ) from None
    except ClientAuthenticationError as exc:
        first = (exc.message or str(exc)).strip().splitlines()[0]
        raise CredentialsError(f"Azure refused the credential: {first}") from None
    except OSError as exc:
        raise OutputError(f"--out: cannot write {exc.filename or ''} ({exc.strerror or exc})") from None
