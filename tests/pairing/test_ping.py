from datetime import timedelta

from pairedbus.pairing.ping import is_ping, ping_message


def test_a_ping_is_empty_with_the_ping_content_type_and_a_one_second_ttl():
    ping = ping_message(session=False)
    assert ping.content_type == "application/vnd.ms-servicebus-ping"  # the spec's literal
    assert ping.time_to_live == timedelta(seconds=1)
    assert b"".join(ping.body) == b""
    assert ping.session_id is None
    assert ping.message_id
    assert is_ping(ping)


def test_a_ping_to_a_session_entity_has_a_random_session_id():
    first, second = ping_message(session=True), ping_message(session=True)
    assert first.session_id and second.session_id and first.session_id != second.session_id
