import random

from pairedbus.drill.scenario import DrillConfig, DrillEntityKind, drill_entities, kill_points, plan_messages, windows


def test_entities_cycle_session_queue_queue_topic():
    kinds = [e.kind for e in drill_entities(5)]
    assert kinds == [
        DrillEntityKind.SESSION_QUEUE,
        DrillEntityKind.QUEUE,
        DrillEntityKind.TOPIC,
        DrillEntityKind.SESSION_QUEUE,
        DrillEntityKind.QUEUE,
    ]
    topic = drill_entities(3)[2]
    assert len(topic.destinations) == 2 and all("/subscriptions/" in d for d in topic.destinations)


def test_the_plan_is_reproducible_from_the_seed_and_covers_every_feature():
    config = DrillConfig(messages=3000, seed=9)
    entities = drill_entities(3)
    first, second = plan_messages(config, entities), plan_messages(config, entities)
    assert [(p.entity.name, p.body, p.message_id) for p in first] == [
        (p.entity.name, p.body, p.message_id) for p in second
    ]
    assert len(first) == 3000
    assert any(p.ttl for p in first) and any(p.schedule_in for p in first)
    assert any(p.batch is not None for p in first) and any(p.message_id is None for p in first)
    assert all((p.session_id is not None) == (p.entity.kind is DrillEntityKind.SESSION_QUEUE) for p in first)
    for p in first:  # one send call goes to one entity, and a batch shares its session
        if p.batch is not None:
            mates = [q for q in first if q.batch == p.batch]
            assert {q.entity.name for q in mates} == {p.entity.name}
            assert {q.session_id for q in mates} == {p.session_id}


def test_outage_windows_alternate_with_health_and_end_healthy():
    assert windows(0, 100) == []
    assert windows(2, 100) == [(20, 40), (60, 80)]
    for start, end in windows(3, 10):
        assert 0 < start < end < 10


def test_kill_points_are_spread_over_the_run():
    points = kill_points(5, 1000, random.Random(1))
    assert len(points) == 5 and points == sorted(points)
    assert all(0 < p < 1000 for p in points)
