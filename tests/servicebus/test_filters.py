"""Subscription rule filters: the SQL subset and correlation filters."""

from __future__ import annotations

import pytest

from pairedbus.servicebus.content import BodyType, Content
from pairedbus.servicebus.filters import (
    DEFAULT_RULE_NAME,
    CorrelationFilter,
    FalseFilter,
    FilterSyntaxError,
    Rule,
    RuleFilter,
    RuleSet,
    SqlAction,
    SqlFilter,
    TrueFilter,
    compile_filter,
)


def matches(rule_filter: RuleFilter, content: Content) -> bool:
    return compile_filter(rule_filter)(content, content.filter_properties()) is True


MESSAGE = Content(
    BodyType.DATA,
    (b"x",),
    subject="invoice",
    message_id="m-1",
    correlation_id="c-1",
    session_id="s-1",
    content_type="application/json",
    to="billing",
    reply_to="replies",
    props={"color": "red", "size": 3, "price": 9.5, b"region": b"eu"},
)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("color = 'red'", True),
        ("color = 'blue'", False),
        ("color != 'blue'", True),
        ("color <> 'red'", False),
        ("user.color = 'red' AND size > 2", True),
        ("size >= 4 OR color = 'red'", True),
        ("NOT (color = 'red')", False),
        ("missing = 'x'", False),
        ("NOT missing = 'x'", False),
        ("missing IS NULL", True),
        ("color IS NOT NULL", True),
        ("EXISTS(color)", True),
        ("EXISTS(missing)", False),
        ("color IN ('green', 'red')", True),
        ("color NOT IN ('green', 'red')", False),
        ("sys.Label LIKE 'inv%'", True),
        ("sys.Label NOT LIKE 'inv_ice'", False),
        ("sys.MessageId = 'm-1' AND sys.CorrelationId = 'c-1'", True),
        ("sys.SessionId = 's-1' AND sys.To = 'billing' AND sys.ReplyTo = 'replies'", True),
        ("sys.ContentType = 'application/json'", True),
        ("region = 'eu'", True),
        ("price < 10", True),
        ("1=1", True),
        ("TRUE", True),
        ("FALSE", False),
    ],
)
def test_sql_filter_expression(expression: str, expected: bool) -> None:
    assert matches(SqlFilter(expression), MESSAGE) is expected


def test_sql_filter_parameters() -> None:
    assert matches(SqlFilter("color = @c AND size = @n", {"@c": "red", "@n": 3}), MESSAGE)
    assert not matches(SqlFilter("color = @c", {"c": "blue"}), MESSAGE)


def test_malformed_sql_filter_is_rejected() -> None:
    with pytest.raises(FilterSyntaxError):
        compile_filter(SqlFilter("color = = 'red'"))


def test_correlation_filter_matches_all_given_fields() -> None:
    assert matches(CorrelationFilter(subject="invoice", properties={"color": "red"}), MESSAGE)
    assert matches(CorrelationFilter(correlation_id="c-1", to="billing"), MESSAGE)
    assert not matches(CorrelationFilter(subject="invoice", properties={"color": "blue"}), MESSAGE)
    assert not matches(CorrelationFilter(session_id="other"), MESSAGE)


def test_true_and_false_filters() -> None:
    assert matches(TrueFilter(), MESSAGE)
    assert not matches(FalseFilter(), MESSAGE)


def test_a_rule_that_does_not_compile_leaves_the_rule_it_would_replace() -> None:
    rules = RuleSet()
    rules.remove(DEFAULT_RULE_NAME)
    rules.add(Rule("only-red", SqlFilter("color = 'red'")))
    with pytest.raises(FilterSyntaxError):
        rules.add(Rule("only-red", SqlFilter("color = 'blue'"), SqlAction("SET")))
    assert rules.rules["only-red"] == Rule("only-red", SqlFilter("color = 'red'"))
    assert rules.matches(MESSAGE, MESSAGE.filter_properties())  # still the red filter
