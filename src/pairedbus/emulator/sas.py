"""Shared access signatures as Service Bus checks them: `SharedAccessSignature sr=…&sig=…&se=…&skn=…`,
the signature an HMAC-SHA256 with the key (its UTF-8 bytes) over the URL-encoded audience, a
newline and the expiry in epoch seconds (azure-servicebus `_pyamqp.utils.generate_sas_token`; the
Node SDK signs the same string)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

SCHEME: Final = "SharedAccessSignature "
#: The key name Azure gives a namespace's first authorization rule (and Microsoft's emulator uses).
ROOT_KEY_NAME: Final = "RootManageSharedAccessKey"


@dataclass(frozen=True)
class SasKey:
    """One shared access authorization rule: its name and key, as a connection string carries them."""

    name: str
    key: str


class SasRefused(Exception):
    """The token does not grant access; `reason` is the service's prefix (InvalidSignature...)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


def _signature(encoded_audience: str, expiry: str, key: str) -> str:
    digest = hmac.new(key.encode("utf-8"), f"{encoded_audience}\n{expiry}".encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode("ascii")


def sas_token(audience: str, key: SasKey, *, expires_on: int | None = None) -> str:
    """A token for `audience` (e.g. `https://localhost:5300`) signed with `key`, valid an hour by default."""
    expiry = str(int(time.time()) + 3600 if expires_on is None else expires_on)
    encoded = urllib.parse.quote_plus(audience)
    fields = {"sr": audience, "sig": _signature(encoded, expiry, key.key), "se": expiry, "skn": key.name}
    return SCHEME + urllib.parse.urlencode(fields)


def _raw_fields(token: str) -> dict[str, str]:
    """The token's fields with their values still URL-encoded, as they were signed."""
    fields: dict[str, str] = {}
    for part in token[len(SCHEME) :].split("&"):
        name, sep, value = part.partition("=")
        if not sep:
            raise SasRefused(
                "MalformedToken",
                f"The credentials contained in the authorization header are not in the {SCHEME.strip()} format.",
            )
        fields[name.strip()] = value
    return fields


def _without_scheme(url: str) -> str:
    return url.split("://", 1)[-1].lower().rstrip("/")


def verify_sas_token(token: str, keys: Iterable[SasKey], *, resource: str, now: float | None = None) -> SasKey:
    """The key that signed `token` for `resource` (host and path, e.g. `localhost:5300/queue`).

    Raises SasRefused as the service refuses: a malformed token, an unknown key name, a wrong
    signature, an expired token, or an audience that does not cover the resource (the scheme
    is ignored; the audience must be the resource or one of its parent paths)."""
    if not token.startswith(SCHEME):
        raise SasRefused("MalformedToken", "The authorization header is not a shared access signature.")
    fields = _raw_fields(token)
    missing = [name for name in ("sr", "sig", "se", "skn") if name not in fields]
    if missing:
        raise SasRefused("MalformedToken", f"The token lacks {', '.join(missing)}.")
    key_name = urllib.parse.unquote_plus(fields["skn"])
    key = next((k for k in keys if k.name == key_name), None)
    if key is None:
        raise SasRefused("InvalidSignature", f"The token has an invalid signature (unknown key name '{key_name}').")
    signature = urllib.parse.unquote_plus(fields["sig"])
    if not hmac.compare_digest(_signature(fields["sr"], fields["se"], key.key), signature):
        raise SasRefused("InvalidSignature", "The token has an invalid signature.")
    try:
        expiry = int(fields["se"])
    except ValueError:
        raise SasRefused("MalformedToken", f"The token expiry '{fields['se']}' is not a number.") from None
    if expiry < (time.time() if now is None else now):
        raise SasRefused("ExpiredToken", f"The token is expired. Expiration time: '{expiry}'.")
    audience = _without_scheme(urllib.parse.unquote_plus(fields["sr"]))
    target = _without_scheme(resource)
    if not (target == audience or target.startswith(audience + "/")):
        raise SasRefused("InvalidAudience", f"The token audience '{audience}' does not cover '{target}'.")
    return key
