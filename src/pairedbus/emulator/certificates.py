"""The emulator's own TLS: a self-signed CA and a server certificate it signs for `localhost` and
`127.0.0.1`, written as PEM files, so that an unmodified client trusts the emulator when given
the CA file (`ServiceBusAdministrationClient(..., connection_verify=str(files.ca_path))`).

Nothing is trusted system-wide: the CA exists only in the directory it is written to.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

#: The names the server certificate is valid for (loopback only, as the emulator listens).
LOOPBACK_NAMES: Final = ("localhost", "127.0.0.1", "::1")
DEFAULT_VALIDITY: Final = datetime.timedelta(days=7)


@dataclass(frozen=True)
class TlsFiles:
    """Where the CA certificate (for clients) and the server certificate and key (for the emulator) are."""

    ca_path: Path
    cert_path: Path
    key_path: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert_path, self.key_path)
        return context


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "pairedbus emulator"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _san(names: tuple[str, ...]) -> x509.SubjectAlternativeName:
    entries: list[x509.GeneralName] = []
    for name in names:
        try:
            entries.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            entries.append(x509.DNSName(name))
    return x509.SubjectAlternativeName(entries)


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def generate_certificates(
    directory: Path, *, names: tuple[str, ...] = LOOPBACK_NAMES, validity: datetime.timedelta = DEFAULT_VALIDITY
) -> TlsFiles:
    """Write `ca.pem`, `server.pem` and `server.key` into `directory` (created if missing)."""
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    not_before, not_after = now - datetime.timedelta(minutes=5), now + validity

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_subject = _name("pairedbus emulator CA")
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_subject)
        .issuer_name(ca_subject)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(ca_ski, critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(names[0]))
        .issuer_name(ca_subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=True,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(_san(names), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    files = TlsFiles(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    files.ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files.cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    files.key_path.write_bytes(_pem_key(key))
    files.key_path.chmod(0o600)
    return files
