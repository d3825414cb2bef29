"""Checks of command-line values that several commands share: one line naming the flag, exit 2, before
any work (Spark, Azure) starts."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Final, TypeVar

from pairedbus.commands.output import check_writable_dir
from pairedbus.errors import CredentialsError, OutputError, UserError

T = TypeVar("T")


#: An Azure subscription id is a GUID (8-4-4-4-12 hex digits), e.g. in `az account show --query id`.
_GUID: Final = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def check_subscription_id(flag: str, value: str) -> str:
    """A subscription id as a GUID: it becomes part of ARM URLs and of output file names, so
    nothing else (`../../x y`) may pass."""
    if not isinstance(value, str) or not _GUID.fullmatch(value):
        shown = value if len(value) <= 60 else value[:57] + "..."
        raise UserError(
            f"{flag}: expected a subscription id (a GUID such as 00000000-0000-0000-0000-000000000000), got {shown!r}"
        )
    return value.lower()


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
