"""Checks of command-line values that several commands share: one line, its own exit code, before
any work (Spark, Azure) starts."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pairedbus.errors import CredentialsError, OutputError

T = TypeVar("T")


def check_output_dir(flag: str, out: str) -> None:
    """A local output directory that exists or can be created, and can be written."""
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise OutputError(f"{flag} {out}: exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".pairedbus-write-{uuid.uuid4().hex}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise OutputError(f"{flag} {out}: cannot write there ({exc.strerror or exc})") from None


def with_azure_errors(call: Callable[[], T]) -> T:
    """Azure's "no credential" and "credential refused" as one line (exit 7), writes that fail
    midway as an output error (exit 4), instead of tracebacks."""
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
