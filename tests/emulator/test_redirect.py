"""`amqps_to`: localhost:5671 resolves to the given port inside the block only; other ports and hosts are untouched."""

from __future__ import annotations

import socket

from pairedbus.emulator.redirect import AMQPS_PORT, amqps_to


def _port(host: str, port: int | str) -> int:
    return int(socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)[0][4][1])


def test_localhost_amqps_resolves_to_the_brokers_port_inside_the_block_only() -> None:
    with amqps_to(40123):
        assert _port("localhost", AMQPS_PORT) == 40123
        assert _port("127.0.0.1", str(AMQPS_PORT)) == 40123
        assert _port("localhost", 5672) == 5672
    assert _port("localhost", AMQPS_PORT) == AMQPS_PORT
