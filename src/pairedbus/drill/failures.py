"""What a send that reached the drill's caller was: its error, as the SDK (or the failover sender)
raised it, and which hop raised it. The report counts them by kind (`send_failures_by_error`), so a
failed wire drill says what the sender let through instead of a bare count."""

from __future__ import annotations

from dataclasses import dataclass

from pairedbus import sdk
from pairedbus.sender.errors import raised_by_backlog

#: A failure's message is cut to this many characters in the report's examples.
MESSAGE_CHARS = 300


@dataclass(frozen=True)
class SendFailure:
    """One send that raised to the caller."""

    #: "primary" (the primary's error, passed on) or "backlog" (the failed-over send's).
    hop: str
    #: The exception's class name, and what caused it when the sender re-raised another.
    type: str
    #: The AMQP error condition it carries (None: the SDK's own failure, or not an SDK error).
    condition: str | None
    #: What the SDK says of a retry (its `retryable` flag).
    retryable: bool
    message: str

    @classmethod
    def of(cls, exc: BaseException) -> SendFailure:
        cause = exc.__cause__
        name = type(exc).__name__ + (f" <- {type(cause).__name__}" if cause is not None else "")
        return cls(
            hop="backlog" if raised_by_backlog(exc) else "primary",
            type=name,
            condition=sdk.condition_of(exc),
            retryable=sdk.is_retryable(exc),
            message=" ".join(str(exc).split())[:MESSAGE_CHARS],
        )

    @property
    def kind(self) -> str:
        """What the report counts by: hop, type, condition and the retryable flag."""
        condition = f" [{self.condition}]" if self.condition else ""
        return f"{self.hop}: {self.type}{condition} retryable={str(self.retryable).lower()}"
