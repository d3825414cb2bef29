"""Claims-based security (`$cbs`): the put-token a client sends before it attaches to an entity.

A SAS token is checked as the service checks it: the HMAC-SHA256 of the URL-encoded audience and
the expiry, under the namespace's key of the name the token gives, and the expiry not passed. A
token that is not a SAS token (an Entra ID access token) cannot be verified offline: it is
accepted when the broker was told to (`accept_entra_tokens`, the default), as Microsoft's
emulator accepts any credential.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
import urllib.parse
from dataclasses import dataclass

__all__ = ["SAS_PREFIX", "TokenCheck", "audience_path", "check_token", "sas_token"]

SAS_PREFIX = "SharedAccessSignature "


@dataclass(frozen=True, slots=True)
class TokenCheck:
    ok: bool
    description: str


def sas_token(audience: str, key_name: str, key: str, *, expiry: int | None = None) -> str:
    """A SAS token as the SDK makes one (for tests and the emulator's own clients)."""
    se = int(time.time()) + 3600 if expiry is None else expiry
    sr = urllib.parse.quote(audience, safe="")
    sig = base64.b64encode(hmac.new(key.encode(), f"{sr}\n{se}".encode(), hashlib.sha256).digest()).decode()
    return f"{SAS_PREFIX}sr={sr}&sig={urllib.parse.quote(sig, safe='')}&se={se}&skn={key_name}"


def check_token(token: str, keys: dict[str, str], *, accept_entra_tokens: bool, now: float | None = None) -> TokenCheck:
    if not token.startswith(SAS_PREFIX):
        if accept_entra_tokens:
            return TokenCheck(True, "Accepted")
        return TokenCheck(False, "Only SAS tokens are accepted by this namespace.")
    fields = dict(part.partition("=")[::2] for part in token[len(SAS_PREFIX) :].split("&"))
    sr, sig, se, skn = (fields.get(k, "") for k in ("sr", "sig", "se", "skn"))
    key = keys.get(skn)
    if key is None:
        return TokenCheck(False, f"InvalidSignature: The token has an invalid signature (unknown key name '{skn}').")
    expected = base64.b64encode(hmac.new(key.encode(), f"{sr}\n{se}".encode(), hashlib.sha256).digest()).decode()
    if not hmac.compare_digest(urllib.parse.unquote(sig), expected):
        return TokenCheck(False, "InvalidSignature: The token has an invalid signature.")
    if not se.isdigit() or int(se) < (time.time() if now is None else now):
        return TokenCheck(False, "ExpiredToken: The provided token has expired.")
    return TokenCheck(True, "Accepted")


def audience_path(audience: str) -> str:
    """The entity path a token's audience names ('' for the whole namespace)."""
    parsed = urllib.parse.urlparse(urllib.parse.unquote(audience))
    return parsed.path.strip("/") if parsed.scheme else audience.strip("/")
