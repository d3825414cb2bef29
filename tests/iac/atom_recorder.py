"""A loopback HTTPS stand-in for the Service Bus entity-management endpoint (ATOM over REST).

It records every request the real `ServiceBusAdministrationClient` sends and answers the way the
service does, per the REST reference (https://learn.microsoft.com/rest/api/servicebus/create-queue,
.../update-queue, .../get-entity):

- `GET /{path}`: 200 with an ATOM `<entry>` holding the `QueueDescription`, or 200 with an empty
  `<feed>` when no such entity exists (the SDK turns that into ResourceNotFoundError);
- `PUT /{path}` without `If-Match`: create, 201 with the stored entry (409 if it exists);
- `PUT /{path}` with `If-Match: *`: update, 200 with the stored entry;
- a duration above .NET TimeSpan.MaxValue, or one that is not ISO 8601, is a 400, as the service
  refuses it (azure-servicebus `_model_workaround.avoid_timedelta_overflow`).

The service stores durations as .NET ticks and writes them back with `XmlConvert.ToString`; the
recorder does the same, so a value sent is read back exactly as the service would report it. Its
response documents follow the entries recorded from the live service in the Azure SDKs' tests.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import threading
import urllib.parse
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from pairedbus.durations import TIMESPAN_MAX_TICKS, duration_ticks, iso_duration
from tests.load import guard

ATOM = "http://www.w3.org/2005/Atom"
SB = "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"
TIMESPAN_MAX = "P10675199DT2H48M5.4775807S"
#: Elements of a QueueDescription that hold durations (TimeSpan on the service side).
DURATION_ELEMENTS = (
    "LockDuration",
    "DefaultMessageTimeToLive",
    "DuplicateDetectionHistoryTimeWindow",
    "AutoDeleteOnIdle",
)

#: A new queue's description as the service reports it (defaults of a Standard namespace), in the
#: service's element order.
SERVICE_DEFAULTS: dict[str, str] = {
    "LockDuration": "PT1M",
    "MaxSizeInMegabytes": "1024",
    "RequiresDuplicateDetection": "false",
    "RequiresSession": "false",
    "DefaultMessageTimeToLive": TIMESPAN_MAX,
    "DeadLetteringOnMessageExpiration": "false",
    "DuplicateDetectionHistoryTimeWindow": "PT10M",
    "MaxDeliveryCount": "10",
    "EnableBatchedOperations": "true",
    "SizeInBytes": "0",
    "MessageCount": "0",
    "IsAnonymousAccessible": "false",
    "Status": "Active",
    "CreatedAt": "2026-11-22T10:00:00Z",
    "UpdatedAt": "2026-11-22T10:00:00Z",
    "AccessedAt": "0001-01-01T00:00:00Z",
    "SupportOrdering": "true",
    "AutoDeleteOnIdle": TIMESPAN_MAX,
    "EnablePartitioning": "false",
    "EntityAvailabilityStatus": "Available",
    "EnableExpress": "false",
}
#: What a client may set; everything else is the service's to report.
WRITABLE = frozenset(
    {
        "LockDuration",
        "MaxSizeInMegabytes",
        "RequiresDuplicateDetection",
        "RequiresSession",
        "DefaultMessageTimeToLive",
        "DeadLetteringOnMessageExpiration",
        "DuplicateDetectionHistoryTimeWindow",
        "MaxDeliveryCount",
        "EnableBatchedOperations",
        "Status",
        "AutoDeleteOnIdle",
        "EnablePartitioning",
        "EnableExpress",
        "ForwardTo",
        "ForwardDeadLetteredMessagesTo",
        "UserMetadata",
    }
)


@dataclass
class Exchange:
    """One request as it arrived, and the status it got."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    status: int = 0

    def queue_description(self) -> dict[str, str]:
        """The `QueueDescription` fields of an ATOM request body, by local element name."""
        root = ET.fromstring(self.body)
        assert root.tag == f"{{{ATOM}}}entry", root.tag
        content = root.find(f"{{{ATOM}}}content")
        assert content is not None and content.get("type") == "application/xml"
        description = content.find(f"{{{SB}}}QueueDescription")
        assert description is not None, self.body
        return {child.tag.split("}", 1)[1]: (child.text or "") for child in description}


@dataclass
class AtomService:
    """The recorder's state: the queues it holds and every exchange, in order."""

    host: str = "127.0.0.1"
    queues: dict[str, dict[str, str]] = field(default_factory=dict)
    exchanges: list[Exchange] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def put_queue(self, name: str, **overrides: str) -> None:
        """Seed a queue as it would exist on the service (for adopt and read)."""
        self.queues[name] = {**SERVICE_DEFAULTS, **overrides}

    def writes(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.method == "PUT"]

    # --- request handling ----------------------------------------------------------------

    def handle(self, exchange: Exchange) -> tuple[int, bytes]:
        name = urllib.parse.unquote(urllib.parse.urlsplit(exchange.path).path.lstrip("/"))
        if exchange.method == "GET":
            queue = self.queues.get(name)
            return 200, self._entry(name, queue) if queue is not None else self._empty_feed()
        if exchange.method == "PUT":
            return self._put(name, exchange)
        if exchange.method == "DELETE":
            return (200, b"") if self.queues.pop(name, None) is not None else (404, self._error(404, "not found"))
        return 405, self._error(405, "method not allowed")

    def _put(self, name: str, exchange: Exchange) -> tuple[int, bytes]:
        updating = exchange.headers.get("if-match") == "*"
        if updating != (name in self.queues):
            status = 404 if updating else 409
            return status, self._error(status, "entity missing" if updating else "entity already exists")
        sent = exchange.queue_description()
        for element in DURATION_ELEMENTS:
            if element in sent:
                try:
                    ticks = duration_ticks(sent[element])
                except ValueError:
                    return 400, self._error(400, f"{element}: '{sent[element]}' is not a valid TimeSpan")
                if ticks > TIMESPAN_MAX_TICKS:
                    return 400, self._error(400, f"{element}: '{sent[element]}' exceeds TimeSpan.MaxValue")
                sent[element] = iso_duration(ticks)  # stored as ticks, written back by XmlConvert
        stored = dict(self.queues.get(name, SERVICE_DEFAULTS))
        stored.update({key: value for key, value in sent.items() if key in WRITABLE and value != ""})
        self.queues[name] = stored
        return (200 if updating else 201), self._entry(name, stored)

    # --- documents, as the service writes them ---------------------------------------------

    def _entry(self, name: str, description: dict[str, str]) -> bytes:
        url = f"https://{self.host}/{urllib.parse.quote(name, safe='')}?api-version=2021-05"
        fields = "".join(f"<{key}>{value}</{key}>" for key, value in description.items())
        return (
            f'<entry xmlns="{ATOM}"><id>{url}</id><title type="text">{name}</title>'
            "<published>2026-11-22T10:00:00Z</published><updated>2026-11-22T10:00:00Z</updated>"
            f'<author><name>recorder</name></author><link rel="self" href="{url}"/>'
            f'<content type="application/xml"><QueueDescription xmlns="{SB}" '
            f'xmlns:i="http://www.w3.org/2001/XMLSchema-instance">{fields}</QueueDescription></content></entry>'
        ).encode()

    @staticmethod
    def _empty_feed() -> bytes:
        return (
            f'<feed xmlns="{ATOM}"><title type="text">Publicly Listed Services</title>'
            '<subtitle type="text">This is the list of publicly-listed services currently available.</subtitle>'
            "<id>uuid:00000000-0000-0000-0000-000000000000;id=1</id><updated>2026-11-22T10:00:00Z</updated>"
            "<generator>Service Bus 1.1</generator></feed>"
        ).encode()

    @staticmethod
    def _error(code: int, detail: str) -> bytes:
        return f"<Error><Code>{code}</Code><Detail>{detail}</Detail></Error>".encode()


def _handler(service: AtomService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            exchange = Exchange(
                self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, self.rfile.read(length)
            )
            with service.lock:
                status, body = service.handle(exchange)
                exchange.status = status
                service.exchanges.append(exchange)
            self.send_response(status)
            self.send_header("Content-Type", "application/atom+xml;type=entry;charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_PUT = do_DELETE = _serve

        def log_message(self, *_args: object) -> None:  # keep test output clean
            pass

    return Handler


def self_signed_certificate(directory: Path) -> tuple[Path, Path]:
    """A certificate for IP 127.0.0.1 and its key, written as PEM files (cert, key)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "recorder.pem", directory / "recorder.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


class Recorder:
    """The HTTPS server on 127.0.0.1 (an ephemeral port) serving one AtomService."""

    def __init__(self, cert_path: Path, key_path: Path) -> None:
        self.service = AtomService()
        self.ca_path = cert_path
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.service))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_path, key_path)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self.address = f"127.0.0.1:{self._server.server_address[1]}"
        self.service.host = self.address
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Recorder:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=guard(10))
