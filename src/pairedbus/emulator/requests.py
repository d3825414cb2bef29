"""Requests on `$cbs` and `$management`, and the replies to them: the request's id (its AMQP type
kept: Node times out when a string id comes back as binary), reply-to, application properties and
body, read from the message's sections; the reply's correlation id is that id."""

from __future__ import annotations

from typing import Any

from pairedbus.emulator.codec import decode, encode, encode_described_list
from pairedbus.emulator.frames import Code, field
from pairedbus.emulator.messages import sections

__all__ = ["Request", "parse_request", "reply_payload"]


class Request:
    """A request message: its id (type kept), reply-to, application properties and body."""

    def __init__(self, payload: bytes) -> None:
        self.message_id: Any = None
        self.reply_to: str | None = None
        self.application_properties: dict[Any, Any] = {}
        self.body: Any = None
        for code, start, _ in sections(payload):
            value, _ = decode(payload, start)
            if code == Code.PROPERTIES:
                self.message_id = field(value.value, 0)
                self.reply_to = field(value.value, 4)
            elif code == Code.APPLICATION_PROPERTIES:
                self.application_properties = value.value or {}
            elif code == Code.AMQP_VALUE:
                self.body = value.value

    def property(self, name: str, default: Any = None) -> Any:
        return self.application_properties.get(name, default)


def parse_request(payload: bytes) -> Request:
    return Request(payload)


def reply_payload(request: Request, status: dict[str, Any], body: Any) -> bytes:
    properties = encode_described_list(Code.PROPERTIES, [None, None, None, None, None, request.message_id])
    app = b"\x00\x53" + bytes((Code.APPLICATION_PROPERTIES,)) + encode(status)
    value = b"\x00\x53" + bytes((Code.AMQP_VALUE,)) + encode(body)
    return properties + app + value
