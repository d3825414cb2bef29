"""Subscription rules: TrueFilter, FalseFilter, correlation filters and a subset of SQL filters.

The SQL subset: comparisons (`=`, `!=`, `<>`, `<`, `<=`, `>`, `>=`) between properties, string
and number literals and `@parameters`; `AND`, `OR`, `NOT`, parentheses; `IS [NOT] NULL`,
`[NOT] IN (...)`, `[NOT] LIKE '...'`, `EXISTS(prop)`, `TRUE`, `FALSE`, `1=1`. Properties are
`sys.<Name>` (MessageId, CorrelationId, Label/Subject, To, ReplyTo, SessionId, ReplyToSessionId,
ContentType), `user.<name>` or a bare application-property name. A comparison with a missing
property is unknown (SQL three-valued logic), and a rule matches only when its filter is TRUE.

SQL rule actions (https://learn.microsoft.com/azure/service-bus-messaging/service-bus-messaging-sql-rule-action):
`SET <property> = <expression>` and `REMOVE <property>` statements, separated by `;` (optional),
where an expression is a constant, a property, an `@parameter`, or `+ - * / %` of those. A
subscription gets one copy of a message per matching rule that has an action (each copy with that
rule's action applied) and one unmodified copy if any matching rule has none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from pairedbus.servicebus.content import Content, estimate_size

DEFAULT_RULE_NAME = "$Default"


# --- the model's rule records (each admin front-end translates its client's shapes to these) -----


@dataclass(frozen=True, slots=True)
class TrueFilter:
    """Every message matches (the service's `1=1`)."""


@dataclass(frozen=True, slots=True)
class FalseFilter:
    """No message matches (the service's `1=0`)."""


@dataclass(frozen=True, slots=True)
class SqlFilter:
    """A SQL filter's text and its `@parameters` (keys with or without the `@`)."""

    expression: str
    parameters: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class CorrelationFilter:
    """Equality on system properties (by the model's names: `subject` is the service's Label) and on
    application properties; None fields are not compared."""

    correlation_id: str | None = None
    message_id: str | None = None
    to: str | None = None
    reply_to: str | None = None
    subject: str | None = None
    session_id: str | None = None
    reply_to_session_id: str | None = None
    content_type: str | None = None
    properties: Mapping[str, Any] | None = None


#: The system properties a correlation filter compares, by the model's (Content's) names.
CORRELATION_FIELDS = (
    "correlation_id",
    "message_id",
    "to",
    "reply_to",
    "subject",
    "session_id",
    "reply_to_session_id",
    "content_type",
)

RuleFilter = TrueFilter | FalseFilter | SqlFilter | CorrelationFilter


@dataclass(frozen=True, slots=True)
class SqlAction:
    """A SQL rule action's text (`SET ...; REMOVE ...`) and its `@parameters`."""

    expression: str
    parameters: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of a subscription; `created_at` in epoch seconds (None: not recorded)."""

    name: str
    filter: RuleFilter = TrueFilter()
    action: SqlAction | None = None
    created_at: float | None = None


_SYSTEM = {
    "messageid": "message_id",
    "correlationid": "correlation_id",
    "label": "subject",
    "subject": "subject",
    "to": "to",
    "replyto": "reply_to",
    "sessionid": "session_id",
    "replytosessionid": "reply_to_session_id",
    "contenttype": "content_type",
}

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<op><>|!=|<=|>=|=|<|>|\(|\)|,|;|\+|-|\*|/|%)"
    r"|(?P<param>@[A-Za-z_][\w]*)|(?P<ident>\[[^\]]+\]|[A-Za-z_$][\w.$-]*))"
)
_MISSING = object()

Predicate = Callable[[Content, dict[str, Any]], bool | None]


class FilterSyntaxError(ValueError):
    pass


def _tokenize(text: str) -> list[tuple[str, Any]]:
    tokens: list[tuple[str, Any]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise FilterSyntaxError(f"cannot parse SQL filter near {text[pos:]!r}")
        pos = m.end()
        kind = m.lastgroup
        assert kind is not None, "every alternative of _TOKEN is a named group"
        value = m.group(kind)
        if kind == "str":
            tokens.append(("lit", value[1:-1].replace("''", "'")))
        elif kind == "num":
            tokens.append(("lit", float(value) if "." in value else int(value)))
        elif kind == "ident":
            upper = value.upper()
            if upper in {"AND", "OR", "NOT", "IS", "NULL", "IN", "LIKE", "EXISTS", "TRUE", "FALSE", "SET", "REMOVE"}:
                tokens.append(("kw", upper))
            else:
                tokens.append(("ident", value.strip("[]")))
        else:
            tokens.append((kind, value))
    return tokens


def _norm(value: Any) -> Any:
    return value.decode("utf-8") if isinstance(value, bytes) else value


def _property_getter(name: str) -> Callable[[Content, dict[str, Any]], Any]:
    lowered = name.lower()
    if lowered.startswith("sys."):
        attr = _SYSTEM.get(lowered[4:])
        if attr is None:
            raise FilterSyntaxError(f"unsupported system property {name!r}")

        def system(content: Content, props: dict[str, Any]) -> Any:
            value = getattr(content, attr)
            return _MISSING if value is None else value

        return system
    if lowered.startswith("user."):
        name = name[5:]

    def user(content: Content, props: dict[str, Any]) -> Any:
        value = props.get(name, _MISSING)
        if value is _MISSING:
            for key, candidate in props.items():  # property names compare case-insensitively
                if key.lower() == name.lower():
                    return _norm(candidate)
        return _norm(value)

    return user


class _Parser:
    def __init__(self, text: str, parameters: dict[str, Any] | None) -> None:
        self.tokens = _tokenize(text)
        self.pos = 0
        self.parameters = {k if k.startswith("@") else f"@{k}": v for k, v in (parameters or {}).items()}

    def peek(self) -> tuple[str, Any] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, kind: str, value: Any = None) -> Any:
        token = self.peek()
        if token is None or token[0] != kind or (value is not None and token[1] != value):
            raise FilterSyntaxError(f"expected {value or kind}, got {token}")
        self.pos += 1
        return token[1]

    def accept(self, kind: str, value: Any = None) -> bool:
        token = self.peek()
        if token is not None and token[0] == kind and (value is None or token[1] == value):
            self.pos += 1
            return True
        return False

    def parse(self) -> Predicate:
        predicate = self.parse_or()
        if self.peek() is not None:
            raise FilterSyntaxError(f"unexpected {self.peek()}")
        return predicate

    def parse_or(self) -> Predicate:
        left = self.parse_and()
        while self.accept("kw", "OR"):
            right = self.parse_and()
            left = _or(left, right)
        return left

    def parse_and(self) -> Predicate:
        left = self.parse_not()
        while self.accept("kw", "AND"):
            right = self.parse_not()
            left = _and(left, right)
        return left

    def parse_not(self) -> Predicate:
        if self.accept("kw", "NOT"):
            inner = self.parse_not()
            return lambda c, p: None if (r := inner(c, p)) is None else not r
        return self.parse_predicate()

    def parse_operand(self) -> Callable[[Content, dict[str, Any]], Any]:
        token = self.peek()
        if token is None:
            raise FilterSyntaxError("unexpected end of filter")
        self.pos += 1
        kind, value = token
        if kind == "lit":
            return _constant(value)
        if kind == "param":
            if value not in self.parameters:
                raise FilterSyntaxError(f"missing parameter {value}")
            return _constant(self.parameters[value])
        if kind == "ident":
            return _property_getter(value)
        raise FilterSyntaxError(f"unexpected {token}")

    def parse_predicate(self) -> Predicate:
        if self.accept("op", "("):
            inner = self.parse_or()
            self.take("op", ")")
            return inner
        if self.accept("kw", "TRUE"):
            return lambda c, p: True
        if self.accept("kw", "FALSE"):
            return lambda c, p: False
        if self.accept("kw", "EXISTS"):
            self.take("op", "(")
            getter = _property_getter(self.take("ident"))
            self.take("op", ")")
            return lambda c, p: getter(c, p) is not _MISSING
        left = self.parse_operand()
        if self.accept("kw", "IS"):
            negate = self.accept("kw", "NOT")
            self.take("kw", "NULL")
            return lambda c, p: (left(c, p) in (_MISSING, None)) != negate
        negate = self.accept("kw", "NOT")
        if self.accept("kw", "IN"):
            self.take("op", "(")
            options = [self.parse_operand()]
            while self.accept("op", ","):
                options.append(self.parse_operand())
            self.take("op", ")")

            def is_in(c: Content, p: dict[str, Any]) -> bool | None:
                value = left(c, p)
                if value is _MISSING:
                    return None
                return any(value == o(c, p) for o in options) != negate

            return is_in
        if self.accept("kw", "LIKE"):
            pattern = _like(self.take("lit"))

            def like(c: Content, p: dict[str, Any]) -> bool | None:
                value = left(c, p)
                if value is _MISSING or not isinstance(value, str):
                    return None
                return bool(pattern.fullmatch(value)) != negate

            return like
        if negate:
            raise FilterSyntaxError("NOT must be followed by IN or LIKE here")
        op = self.take("op")
        right = self.parse_operand()
        compare = _COMPARATORS.get(op)
        if compare is None:
            raise FilterSyntaxError(f"unsupported operator {op}")

        def comparison(c: Content, p: dict[str, Any]) -> bool | None:
            a, b = left(c, p), right(c, p)
            if a is _MISSING or b is _MISSING or a is None or b is None:
                return None
            try:
                return compare(a, b)
            except TypeError:
                return None

        return comparison


_COMPARATORS: dict[str, Callable[[Any, Any], bool]] = {
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<>": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def _or(left: Predicate, right: Predicate) -> Predicate:
    def either(c: Content, p: dict[str, Any]) -> bool | None:
        a = left(c, p)
        if a is True:
            return True
        b = right(c, p)
        if b is True:
            return True
        return None if (a is None or b is None) else False

    return either


def _and(left: Predicate, right: Predicate) -> Predicate:
    def both(c: Content, p: dict[str, Any]) -> bool | None:
        a = left(c, p)
        if a is False:
            return False
        b = right(c, p)
        if b is False:
            return False
        return None if (a is None or b is None) else True

    return both


def _like(pattern: str) -> re.Pattern[str]:
    out = []
    for ch in pattern:
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
    return re.compile("".join(out), re.DOTALL)


def compile_sql(expression: str, parameters: dict[str, Any] | None = None) -> Predicate:
    return _Parser(expression, parameters).parse()


Action = Callable[[Content], Content]
Operand = Callable[[Content, dict[str, Any]], Any]

_ARITHMETIC: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "%": lambda a, b: a % b,
}


class _ActionParser(_Parser):
    """`SET prop = expr [;] REMOVE prop [;] ...` into a function from content to a new content."""

    def parse_action(self) -> Action:
        statements: list[tuple[str, str, Operand | None]] = []
        while self.peek() is not None:
            if self.accept("kw", "SET"):
                name = self.take("ident")
                self.take("op", "=")
                statements.append(("set", name, self.parse_sum()))
            elif self.accept("kw", "REMOVE"):
                statements.append(("remove", self.take("ident"), None))
            else:
                raise FilterSyntaxError(f"expected SET or REMOVE, got {self.peek()}")
            while self.accept("op", ";") or self.accept("op", ","):
                pass
        targets = [(op, _target(name), expr) for op, name, expr in statements]

        def apply(content: Content) -> Content:
            # the changed message is a new record, encoded from its fields by a wire front-end
            new = content._replace(wire=None, wire_cut=None)
            app = dict(content.props or {})
            props = content.filter_properties()
            for op, (attr, key), expr in targets:
                value = None
                if op == "set":
                    value = expr(new, props)  # type: ignore[misc]  # a SET statement always has its expression (only REMOVE's is None)
                    if value is _MISSING:
                        continue  # an unknown value sets nothing
                if attr is not None:
                    changed: dict[str, Any] = {attr: None if value is None else str(value)}
                    new = new._replace(**changed)
                elif op == "set":
                    app[key] = value
                    props[key] = value
                else:
                    app.pop(key, None)
                    props.pop(key, None)
            new = new._replace(props=app or None)
            return new._replace(size=estimate_size(new))

        return apply

    def parse_sum(self) -> Operand:
        left = self.parse_product()
        while (token := self.peek()) in (("op", "+"), ("op", "-")):
            self.pos += 1
            left = _binary(_ARITHMETIC[token[1]], left, self.parse_product())
        return left

    def parse_product(self) -> Operand:
        left = self.parse_unary()
        while (token := self.peek()) is not None and token[0] == "op" and token[1] in ("*", "/", "%"):
            self.pos += 1
            left = _binary(_ARITHMETIC[token[1]], left, self.parse_unary())
        return left

    def parse_unary(self) -> Operand:
        if self.accept("op", "-"):
            inner = self.parse_unary()
            return lambda c, p: v if (v := inner(c, p)) is _MISSING else -v
        if self.accept("op", "("):
            inner = self.parse_sum()
            self.take("op", ")")
            return inner
        return self.parse_operand()


def _constant(value: Any) -> Operand:
    """A literal's or a parameter's value, whatever the message."""
    return lambda c, p: value


def _binary(fn: Callable[[Any, Any], Any], left: Operand, right: Operand) -> Operand:
    def evaluate(c: Content, p: dict[str, Any]) -> Any:
        a, b = left(c, p), right(c, p)
        if a is _MISSING or b is _MISSING:
            return _MISSING
        return fn(a, b)

    return evaluate


def _target(name: str) -> tuple[str | None, str]:
    """(Content attribute, None) for a sys. property, (None, key) for a user property."""
    lowered = name.lower()
    if lowered.startswith("sys."):
        attr = _SYSTEM.get(lowered[4:])
        if attr is None:
            raise FilterSyntaxError(f"unsupported system property {name!r}")
        return attr, name
    return None, name[5:] if lowered.startswith("user.") else name


def compile_action(action: SqlAction | None) -> Action | None:
    """The rule's action as a content transformation; None for no action (EmptyRuleAction)."""
    if action is None or not action.expression.strip():
        return None
    return _ActionParser(action.expression, dict(action.parameters or {})).parse_action()


def _correlation(f: CorrelationFilter) -> Predicate:
    checks: list[tuple[str, Any]] = [
        (attr, getattr(f, attr)) for attr in CORRELATION_FIELDS if getattr(f, attr) is not None
    ]
    properties = dict(f.properties or {})

    def matches(c: Content, p: dict[str, Any]) -> bool:
        for attr, expected in checks:
            if getattr(c, attr) != expected:
                return False
        for key, expected in properties.items():
            if _norm(p.get(key, _MISSING)) != expected:
                return False
        return True

    return matches


def compile_filter(rule_filter: RuleFilter) -> Predicate:
    match rule_filter:
        case TrueFilter():
            return lambda c, p: True
        case FalseFilter():
            return lambda c, p: False
        case CorrelationFilter():
            return _correlation(rule_filter)
        case SqlFilter():
            return compile_sql(rule_filter.expression or "1=1", dict(rule_filter.parameters or {}))
    raise TypeError(f"unsupported rule filter {type(rule_filter).__name__}")


def is_true_filter(rule_filter: RuleFilter) -> bool:
    if isinstance(rule_filter, SqlFilter):
        return rule_filter.expression.strip() in ("1=1", "TRUE")
    return isinstance(rule_filter, TrueFilter)


def filter_counts(rules: Collection[Rule]) -> tuple[int, int]:
    """(SQL filters, correlation filters) among `rules`, as a topic's runtime properties count them
    (true and false filters are SQL filters to the service)."""
    correlation = sum(1 for rule in rules if isinstance(rule.filter, CorrelationFilter))
    return len(rules) - correlation, correlation


class RuleSet:
    """A subscription's rules; a message is copied once if any rule matches."""

    def __init__(self) -> None:
        self.rules: dict[str, Rule] = {}
        self._predicates: dict[str, Predicate] = {}
        self._actions: dict[str, Action] = {}
        self.always_true = False
        self.add(Rule(DEFAULT_RULE_NAME))

    def add(self, rule: Rule) -> None:
        """Add or replace `rule`; a filter or action that does not compile changes nothing."""
        predicate, action = compile_filter(rule.filter), compile_action(rule.action)
        self._predicates[rule.name] = predicate
        if action is None:
            self._actions.pop(rule.name, None)
        else:
            self._actions[rule.name] = action
        self.rules[rule.name] = rule
        self._refresh()

    def remove(self, name: str) -> None:
        del self.rules[name]
        del self._predicates[name]
        self._actions.pop(name, None)
        self._refresh()

    def _refresh(self) -> None:
        #: True when every message gets exactly one unmodified copy (no filter to evaluate).
        self.always_true = not self._actions and any(is_true_filter(r.filter) for r in self.rules.values())

    def copies(self, content: Content, props: dict[str, Any]) -> list[Content]:
        """What the subscription stores for this message: one copy per matching rule with an
        action, plus the message itself if any matching rule has no action."""
        out: list[Content] = []
        plain = False
        for name, predicate in self._predicates.items():
            if predicate(content, props) is not True:
                continue
            action = self._actions.get(name)
            if action is None:
                plain = True
            else:
                out.append(action(content))
        if plain:
            out.insert(0, content)
        return out

    def matches(self, content: Content, props: dict[str, Any]) -> bool:
        return any(predicate(content, props) is True for predicate in self._predicates.values())
