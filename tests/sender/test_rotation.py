import random
from collections import Counter

import pytest

from pairedbus import contract
from pairedbus.sender.rotation import BacklogRotation

QUEUES = contract.backlog_queue_names("contoso", 4)


def test_pick_is_random_and_reproducible_with_a_seeded_rng():
    picks = [BacklogRotation(QUEUES, rng=random.Random(7)).pick() for _ in range(3)]
    assert len(set(picks)) == 1  # same seed, same pick
    rotation = BacklogRotation(QUEUES, rng=random.Random(7))
    counts = Counter(rotation.pick() for _ in range(4000))
    assert set(counts) == set(QUEUES)
    assert min(counts.values()) > 800  # roughly uniform over the four queues


def test_a_queue_taken_out_is_never_picked_again():
    rotation = BacklogRotation(QUEUES, rng=random.Random(1))
    rotation.take_out(QUEUES[2])
    assert QUEUES[2] not in rotation
    assert {rotation.pick() for _ in range(500)} == {QUEUES[0], QUEUES[1], QUEUES[3]}
    assert rotation.removals == 1


def test_pick_excludes_queues_already_tried():
    rotation = BacklogRotation(QUEUES, rng=random.Random(1))
    assert rotation.pick(exclude=set(QUEUES[:3])) == QUEUES[3]
    assert rotation.pick(exclude=set(QUEUES)) is None


def test_the_rotation_refills_when_its_last_queue_leaves():
    rotation = BacklogRotation(QUEUES[:2], rng=random.Random(1))
    rotation.take_out(QUEUES[0])
    assert rotation.in_rotation() == (QUEUES[1],)
    rotation.take_out(QUEUES[1])
    assert rotation.in_rotation() == tuple(QUEUES[:2])


def test_an_empty_rotation_is_refused():
    with pytest.raises(ValueError, match="at least one"):
        BacklogRotation([])
