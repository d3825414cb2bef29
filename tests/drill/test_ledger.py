from datetime import timedelta
from types import SimpleNamespace

from pairedbus import contract
from pairedbus.drill.ledger import Ledger
from pairedbus.drill.scenario import DrillConfig, drill_entities, plan_messages

ENTITIES = drill_entities(3)
QUEUE = ENTITIES[1]


def planned(index=0, ttl=None):
    message = plan_messages(DrillConfig(messages=1, seed=index), [QUEUE])[0]
    message.ttl = ttl
    return message


def received(p, **changes):
    values = {
        "message_id": "m",
        "body": [p.body],
        "application_properties": {k.encode(): v for k, v in p.properties.items()},
        "session_id": p.session_id,
        "subject": p.subject,
        "correlation_id": p.correlation_id,
        "content_type": p.content_type,
        "time_to_live": p.ttl,
        "scheduled_enqueue_time_utc": None,
        "sequence_number": 1,
    }
    values.update(changes)
    return SimpleNamespace(**values)


def test_a_message_delivered_once_unchanged_is_accounted_for():
    ledger = Ledger()
    p = planned()
    ledger.sent(p, "m", None)
    ledger.delivered(QUEUE.name, received(p))
    assert ledger.lost() == [] and ledger.duplicates() == 0 and ledger.mismatches == {}


def test_a_message_never_delivered_is_lost_unless_its_ttl_ran_out():
    ledger = Ledger()
    ledger.sent(planned(), "m", None)
    assert ledger.lost() == [(QUEUE.name, "m")]
    ledger.dead_lettered(QUEUE.name, "m", contract.DEAD_LETTER_TTL_EXPIRED_IN_BACKLOG)
    assert ledger.lost() == []
    assert ledger.wrongly_dead_lettered() == [(QUEUE.name, "m")]  # it had no time to live


def test_an_expired_message_with_a_ttl_is_dead_lettered_not_lost():
    ledger = Ledger()
    ledger.sent(planned(ttl=timedelta(seconds=3)), "m", None)
    ledger.dead_lettered(QUEUE.name, "m", "TTLExpiredException")
    assert ledger.lost() == [] and ledger.wrongly_dead_lettered() == []
    assert ledger.dead_lettered_undelivered() == 1


def test_a_second_copy_of_the_same_id_delivered_is_a_duplicate():
    ledger = Ledger()
    p = planned()
    ledger.sent(p, "m", None)
    ledger.delivered(QUEUE.name, received(p, sequence_number=1))
    ledger.delivered(QUEUE.name, received(p, sequence_number=2))
    assert ledger.duplicates() == 1 and ledger.duplicated_keys() == [(QUEUE.name, "m")]


def _unconfirmed(ledger, p, sequence_number):
    """A consumer received copy `sequence_number` of `p`, and its complete raised."""
    message = received(p, sequence_number=sequence_number)
    ledger.received(QUEUE.name, message)
    ledger.settled(QUEUE.name, message, confirmed=False)


def test_the_same_copy_received_again_after_a_complete_that_raised_is_a_redelivery_not_a_duplicate():
    ledger = Ledger()
    p = planned()
    ledger.sent(p, "m", None)
    _unconfirmed(ledger, p, 1)  # not applied: the copy comes back
    ledger.delivered(QUEUE.name, received(p))
    assert ledger.duplicates() == 0 and ledger.unconfirmed == set()
    assert ledger.delivered_keys() == [(QUEUE.name, "m")] and ledger.lost() == []


def test_a_received_copy_whose_complete_raised_and_that_is_found_nowhere_was_delivered():
    # A complete the broker applied whose answer an outage (or a cut connection) lost: before, nothing was
    # recorded, and the message, gone from its destination, was counted lost (issue 34).
    ledger = Ledger()
    p = planned()
    ledger.sent(p, "m", None)
    _unconfirmed(ledger, p, 7)
    ledger.waiting(QUEUE.name, "other", 8)  # the audit found something else only
    assert ledger.lost() == [] and ledger.delivered_keys() == [(QUEUE.name, "m")]


def test_a_received_copy_whose_complete_raised_and_that_still_waits_is_not_yet_delivered():
    ledger = Ledger()
    p = planned()
    ledger.sent(p, "m", None)
    _unconfirmed(ledger, p, 7)
    ledger.waiting(QUEUE.name, "m", 7)
    assert ledger.delivered_keys() == [] and ledger.not_yet_delivered() == [(QUEUE.name, "m")]
    assert ledger.lost() == []


def test_a_received_copy_whose_complete_raised_and_that_expired_after_is_dead_lettered_not_delivered():
    ledger = Ledger()
    p = planned(ttl=timedelta(seconds=3))
    ledger.sent(p, "m", None)
    _unconfirmed(ledger, p, 7)
    ledger.dead_lettered(QUEUE.name, "m", "TTLExpiredException", 7)
    assert ledger.delivered_keys() == [] and ledger.dead_lettered_undelivered() == 1
    assert ledger.lost() == [] and ledger.dead_lettered_copies() == 0


def test_an_unconfirmed_copy_found_nowhere_beside_a_second_delivered_copy_is_a_duplicate():
    ledger = Ledger()
    p = planned()
    ledger.sent(p, "m", None)
    _unconfirmed(ledger, p, 7)
    ledger.delivered(QUEUE.name, received(p, sequence_number=9))
    assert ledger.duplicates() == 1


def test_altered_messages_are_mismatches():
    p = planned(ttl=timedelta(seconds=30))
    cases = {
        "body": received(p, body=[b"other"]),
        "alias": received(p, application_properties={contract.ALIAS_PATH.encode(): b"q"}),
        "props": received(p, application_properties={b"tenant": b"x"}),
        "subject": received(p, subject="changed"),
        "ttl": received(p, time_to_live=timedelta(seconds=31)),
    }
    for name, message in cases.items():
        ledger = Ledger()
        ledger.sent(p, "m", None)
        ledger.delivered(QUEUE.name, message)
        assert ledger.mismatches, name


def test_a_delivery_nobody_sent_is_unexpected():
    ledger = Ledger()
    ledger.delivered(QUEUE.name, received(planned(), message_id="ghost"))
    assert ledger.unexpected == {(QUEUE.name, "ghost")}


def test_a_delivery_seen_before_its_send_returned_is_checked_when_it_does():
    ledger = Ledger()
    p = planned()
    ledger.delivered(QUEUE.name, received(p, subject="altered"))
    assert ledger.unexpected == {(QUEUE.name, "m")}
    ledger.sent(p, "m", None)
    assert ledger.unexpected == set()
    assert (QUEUE.name, "m") in ledger.mismatches


def test_a_send_that_failed_is_a_send_failure_not_also_lost_unless_a_copy_is_found():
    # The wire drill's first runs: 180 sends raised to the caller, and each was counted twice, as a
    # send failure and (its deliveries) as lost. A failed send may still have been stored: found
    # anywhere, it counts as usual; found nowhere, it was never sent.
    ledger = Ledger()
    p = planned()
    ledger.sent(p, "gone", None, failed=True)
    ledger.sent(p, "stored", None, failed=True)
    ledger.delivered(QUEUE.name, received(p, message_id="stored"))
    assert ledger.lost() == []
    assert ledger.never_stored() == [(QUEUE.name, "gone")]
    assert ledger.deliveries[(QUEUE.name, "stored")] == {1} and ledger.mismatches == {}
