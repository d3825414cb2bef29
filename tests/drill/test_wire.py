"""The wire world reads what the audit needs from the emulators' control view of a held message."""

from __future__ import annotations

from pairedbus import contract
from pairedbus.drill.wire import _held
from pairedbus.drill.world import Seen


def test_a_held_message_is_seen_with_its_sequence_number_alias_and_dead_letter_reason() -> None:
    # the shape of GET /namespaces/{ns}/entities?messages=true (emulator/control.py, `_held_view`)
    waiting = {
        "message_id": "m1",
        "sequence_number": 7,
        "content_type": None,
        "state": "active",
        "application_properties": {contract.ALIAS_PATH: "orders"},
        "dead_letter_reason": None,
    }
    dead = {**waiting, "message_id": "m2", "sequence_number": 9, "dead_letter_reason": "TTLExpiredException"}
    held = _held({"waiting": [waiting], "dead_letter": [dead]})
    assert held.waiting == [Seen("m1", 7, path="orders")]
    assert held.dead_letters == [Seen("m2", 9, path="orders", dead_letter_reason="TTLExpiredException")]
