"""The emulator's own CA and server certificate: what an unmodified TLS client checks."""

from __future__ import annotations

import ipaddress

from cryptography import x509

from pairedbus.emulator.certificates import generate_certificates


def test_the_server_certificate_names_loopback_and_is_signed_by_the_ca(tmp_path) -> None:
    files = generate_certificates(tmp_path)
    ca = x509.load_pem_x509_certificate(files.ca_path.read_bytes())
    server = x509.load_pem_x509_certificate(files.cert_path.read_bytes())
    names = server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert names.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")]
    server.verify_directly_issued_by(ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    assert server.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False
    assert oct(files.key_path.stat().st_mode & 0o777) == "0o600"
