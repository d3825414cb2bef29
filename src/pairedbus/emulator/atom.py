"""The Atom documents of the Service Bus admin plane, as the service writes and reads them.

Entity descriptions (`QueueDescription`, `TopicDescription`, `SubscriptionDescription`,
`RuleDescription`, `NamespaceInfo`) inside an Atom `<entry>`, lists as an Atom `<feed>`, errors as
`<Error><Code/><Detail/></Error>`. Element names and order follow the service's schema (the order
of azure-servicebus's generated `_attribute_map`s, read from the SDK source, not imported: the
SDK's private modules are read only in `pairedbus.sdk`). Documents are written as text with
default namespaces, as the service writes them; requests are read namespace-aware by local name.

Values cross here in the model's records: property values by the SDK's attribute names
(`lock_duration`, ...), so that the model's rules (`pairedbus.servicebus.properties`) judge them,
and rules as `pairedbus.servicebus.filters.Rule`; this module only converts text.
"""

from __future__ import annotations

import datetime
import enum
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from xml.sax.saxutils import escape, quoteattr

from pairedbus import durations
from pairedbus.servicebus.clock import to_datetime
from pairedbus.servicebus.errors import bad_request
from pairedbus.servicebus.filters import (
    DEFAULT_RULE_NAME,
    CorrelationFilter,
    FalseFilter,
    Rule,
    RuleFilter,
    SqlAction,
    SqlFilter,
    TrueFilter,
)

ATOM: Final = "http://www.w3.org/2005/Atom"
SB: Final = "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"
#: The namespace of the message count details (`CountDetails/d2p1:ActiveMessageCount`).
SB_2011: Final = "http://schemas.microsoft.com/netservices/2011/06/servicebus"
XSI: Final = "http://www.w3.org/2001/XMLSchema-instance"
XSD: Final = "http://www.w3.org/2001/XMLSchema"
#: The SQL compatibility level the service reports on every SQL filter and action.
SQL_COMPATIBILITY_LEVEL: Final = "20"

ENTRY_CONTENT_TYPE: Final = "application/atom+xml;type=entry;charset=utf-8"
FEED_CONTENT_TYPE: Final = "application/atom+xml;type=feed;charset=utf-8"
ERROR_CONTENT_TYPE: Final = "application/xml;charset=utf-8"
_TEXT: Final = ' type="text"'


class Kind(enum.StrEnum):
    """The description element of each entity kind."""

    QUEUE = "QueueDescription"
    TOPIC = "TopicDescription"
    SUBSCRIPTION = "SubscriptionDescription"
    RULE = "RuleDescription"


@dataclass(frozen=True)
class Field:
    """One element of a description: where its value comes from and how it is written.

    `attribute`: the SDK's name on the properties (`settings`) or runtime object (`runtime`);
    `writable`: a client may set it (it is read from requests); `optional`: left out when None.
    """

    element: str
    attribute: str
    type: str
    writable: bool = True
    source: str = "settings"
    optional: bool = False


def _f(element: str, attribute: str, type_: str, **kw: Any) -> Field:
    return Field(element, attribute, type_, **kw)


def _runtime(element: str, attribute: str, type_: str) -> Field:
    return Field(element, attribute, type_, writable=False, source="runtime")


def _constant(element: str, value: str) -> Field:
    return Field(element, value, "constant", writable=False, source="constant")


_COUNT_DETAILS = Field("CountDetails", "", "count_details", writable=False, source="runtime")
_AUTHORIZATION_RULES = Field("AuthorizationRules", "", "empty", writable=False, source="constant")

#: The elements of each description, in the service's order (as in responses recorded from the
#: service in the Azure SDKs' tests: counts as Active, DeadLetter, Scheduled, Transfer,
#: TransferDeadLetter; api-version 2024-05 topics end with their SQL and correlation filter counts).
FIELDS: Final[dict[Kind, tuple[Field, ...]]] = {
    Kind.QUEUE: (
        _f("LockDuration", "lock_duration", "duration"),
        _f("MaxSizeInMegabytes", "max_size_in_megabytes", "int"),
        _f("RequiresDuplicateDetection", "requires_duplicate_detection", "bool"),
        _f("RequiresSession", "requires_session", "bool"),
        _f("DefaultMessageTimeToLive", "default_message_time_to_live", "duration"),
        _f("DeadLetteringOnMessageExpiration", "dead_lettering_on_message_expiration", "bool"),
        _f("DuplicateDetectionHistoryTimeWindow", "duplicate_detection_history_time_window", "duration"),
        _f("MaxDeliveryCount", "max_delivery_count", "int"),
        _f("EnableBatchedOperations", "enable_batched_operations", "bool"),
        _runtime("SizeInBytes", "size_in_bytes", "int"),
        _runtime("MessageCount", "total_message_count", "int"),
        _constant("IsAnonymousAccessible", "false"),
        _AUTHORIZATION_RULES,
        _f("Status", "status", "str"),
        _f("ForwardTo", "forward_to", "entity", optional=True),
        _f("UserMetadata", "user_metadata", "str", optional=True),
        _runtime("CreatedAt", "created_at_utc", "datetime"),
        _runtime("UpdatedAt", "updated_at_utc", "datetime"),
        _runtime("AccessedAt", "accessed_at_utc", "datetime"),
        _constant("SupportOrdering", "true"),
        _COUNT_DETAILS,
        _f("AutoDeleteOnIdle", "auto_delete_on_idle", "duration"),
        _f("EnablePartitioning", "enable_partitioning", "bool"),
        _f("EntityAvailabilityStatus", "availability_status", "str", writable=False),
        _f("ForwardDeadLetteredMessagesTo", "forward_dead_lettered_messages_to", "entity", optional=True),
        _f("EnableExpress", "enable_express", "bool"),
        _f("MaxMessageSizeInKilobytes", "max_message_size_in_kilobytes", "int", optional=True),
    ),
    Kind.TOPIC: (
        _f("DefaultMessageTimeToLive", "default_message_time_to_live", "duration"),
        _f("MaxSizeInMegabytes", "max_size_in_megabytes", "int"),
        _f("RequiresDuplicateDetection", "requires_duplicate_detection", "bool"),
        _f("DuplicateDetectionHistoryTimeWindow", "duplicate_detection_history_time_window", "duration"),
        _f("EnableBatchedOperations", "enable_batched_operations", "bool"),
        _runtime("SizeInBytes", "size_in_bytes", "int"),
        _f("FilteringMessagesBeforePublishing", "filtering_messages_before_publishing", "bool"),
        _constant("IsAnonymousAccessible", "false"),
        _AUTHORIZATION_RULES,
        _f("Status", "status", "str"),
        _runtime("CreatedAt", "created_at_utc", "datetime"),
        _runtime("UpdatedAt", "updated_at_utc", "datetime"),
        _runtime("AccessedAt", "accessed_at_utc", "datetime"),
        _f("SupportOrdering", "support_ordering", "bool"),
        _COUNT_DETAILS,
        _runtime("SubscriptionCount", "subscription_count", "int"),
        _f("AutoDeleteOnIdle", "auto_delete_on_idle", "duration"),
        _f("EnablePartitioning", "enable_partitioning", "bool"),
        _f("EntityAvailabilityStatus", "availability_status", "str", writable=False),
        _constant("EnableSubscriptionPartitioning", "false"),
        _f("EnableExpress", "enable_express", "bool"),
        _f("UserMetadata", "user_metadata", "str", optional=True),
        _f("MaxMessageSizeInKilobytes", "max_message_size_in_kilobytes", "int", optional=True),
        _runtime("SqlFilterCount", "sql_filter_count", "int"),
        _runtime("CorrelationFilterCount", "correlation_filter_count", "int"),
    ),
    Kind.SUBSCRIPTION: (
        _f("LockDuration", "lock_duration", "duration"),
        _f("RequiresSession", "requires_session", "bool"),
        _f("DefaultMessageTimeToLive", "default_message_time_to_live", "duration"),
        _f("DeadLetteringOnMessageExpiration", "dead_lettering_on_message_expiration", "bool"),
        _f("DeadLetteringOnFilterEvaluationExceptions", "dead_lettering_on_filter_evaluation_exceptions", "bool"),
        _runtime("MessageCount", "total_message_count", "int"),
        _f("MaxDeliveryCount", "max_delivery_count", "int"),
        _f("EnableBatchedOperations", "enable_batched_operations", "bool"),
        _f("Status", "status", "str"),
        _f("ForwardTo", "forward_to", "entity", optional=True),
        _runtime("CreatedAt", "created_at_utc", "datetime"),
        _runtime("UpdatedAt", "updated_at_utc", "datetime"),
        _runtime("AccessedAt", "accessed_at_utc", "datetime"),
        _COUNT_DETAILS,
        _f("UserMetadata", "user_metadata", "str", optional=True),
        _f("ForwardDeadLetteredMessagesTo", "forward_dead_lettered_messages_to", "entity", optional=True),
        _f("AutoDeleteOnIdle", "auto_delete_on_idle", "duration"),
        _f("EntityAvailabilityStatus", "availability_status", "str", writable=False),
    ),
}
#: `CountDetails` children (namespace SB_2011) and the runtime attribute each reports.
COUNT_DETAILS: Final = (
    ("ActiveMessageCount", "active_message_count"),
    ("DeadLetterMessageCount", "dead_letter_message_count"),
    ("ScheduledMessageCount", "scheduled_message_count"),
    ("TransferMessageCount", "transfer_message_count"),
    ("TransferDeadLetterMessageCount", "transfer_dead_letter_message_count"),
)


# --- values -> text ------------------------------------------------------------------------------


def duration_text(value: str | datetime.timedelta) -> str:
    """A duration as the service writes it (`XmlConvert.ToString(TimeSpan)`).

    The model holds timedeltas (microseconds); .NET TimeSpan.MaxValue cannot be held to its last
    0.7 us, so a value within a microsecond of it is the maximum and is written as the service
    writes the maximum, `contract.TIMESPAN_MAX_ISO`."""
    ticks = durations.duration_ticks(value)
    if ticks > durations.TIMESPAN_MAX_TICKS - durations.TICKS_PER_MICROSECOND:
        ticks = durations.TIMESPAN_MAX_TICKS
    return durations.iso_duration(ticks)


def datetime_text(value: datetime.datetime | None) -> str:
    """An instant as the service writes it: UTC, `Z`, fractional seconds only when there are any."""
    if value is None:
        return "0001-01-01T00:00:00Z"
    utc = value.astimezone(datetime.UTC) if value.tzinfo else value
    text = utc.strftime("%Y-%m-%dT%H:%M:%S")
    if utc.microsecond:
        text += f".{utc.microsecond:06d}".rstrip("0")
    return text + "Z"


def _plain(value: Any) -> str:
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _element(name: str, text: str, attributes: str = "") -> str:
    return f"<{name}{attributes}>{escape(text)}</{name}>"


def _count_details(runtime: Any) -> str:
    counts = "".join(
        _element(f"d2p1:{element}", str(getattr(runtime, attribute, 0) or 0)) for element, attribute in COUNT_DETAILS
    )
    return f'<CountDetails xmlns:d2p1="{SB_2011}">{counts}</CountDetails>'


def _field_text(field: Field, value: Any, entity_uri: Callable[[str], str]) -> str:
    if field.type == "duration":
        return duration_text(value)
    if field.type == "datetime":
        return datetime_text(value)
    if field.type == "entity":
        return value if "://" in value else entity_uri(value)
    return _plain(value)


def description_xml(
    kind: Kind, settings: Mapping[str, Any], runtime: Any, *, entity_uri: Callable[[str], str], extra: str = ""
) -> str:
    """A queue, topic or subscription description from the model's property values (by the SDK's
    names) and runtime properties (`pairedbus.servicebus.admin.RuntimeProperties`); `entity_uri`
    makes a forwarding target's name an address (`sb://host/name`)."""
    parts: list[str] = []
    for field in FIELDS[kind]:
        if field is _COUNT_DETAILS:
            parts.append(_count_details(runtime))
        elif field.type == "empty":
            parts.append(f"<{field.element}></{field.element}>")
        elif field.source == "constant":
            parts.append(_element(field.element, field.attribute))
        else:
            value = (
                getattr(runtime, field.attribute, None) if field.source == "runtime" else settings.get(field.attribute)
            )
            if value is None and (field.optional or field.type != "datetime"):
                continue
            parts.append(_element(field.element, _field_text(field, value, entity_uri)))
    return f'<{kind.value} xmlns="{SB}" xmlns:i="{XSI}">{"".join(parts)}{extra}</{kind.value}>'


# --- rules --------------------------------------------------------------------------------------

#: xsi:type of a key-value's Value (prefix d6p1 = XML Schema) for each Python type, in check order.
_VALUE_TYPES: Final[tuple[tuple[type, str], ...]] = (
    (bool, "boolean"),
    (int, "int"),
    (float, "double"),
    (str, "string"),
    (datetime.datetime, "dateTime"),
    (datetime.timedelta, "duration"),
)


def _key_value_text(value: Any) -> tuple[str, str]:
    for python_type, xsd_type in _VALUE_TYPES:
        if isinstance(value, python_type):
            if xsd_type == "int" and not -(2**31) <= value < 2**31:
                return "long", str(value)
            if xsd_type == "dateTime":
                return xsd_type, datetime_text(value)
            if xsd_type == "duration":
                return xsd_type, durations.iso_duration(value)
            return xsd_type, _plain(value)
    return "string", str(value)


def _key_values(element: str, values: Mapping[str, Any] | None) -> str:
    if not values:
        return ""
    items = []
    for key, value in values.items():
        xsd_type, text = _key_value_text(value)
        value_xml = _element("Value", text, f' xmlns:d6p1="{XSD}" i:type="d6p1:{xsd_type}"')
        items.append(f"<KeyValueOfstringanyType>{_element('Key', key)}{value_xml}</KeyValueOfstringanyType>")
    return f"<{element}>{''.join(items)}</{element}>"


#: The model's correlation filter field -> element, in the service's order.
CORRELATION_FIELDS: Final = (
    ("correlation_id", "CorrelationId"),
    ("message_id", "MessageId"),
    ("to", "To"),
    ("reply_to", "ReplyTo"),
    ("subject", "Label"),
    ("session_id", "SessionId"),
    ("reply_to_session_id", "ReplyToSessionId"),
    ("content_type", "ContentType"),
)


def _sql(kind: str, expression: str, parameters: Mapping[str, Any] | None, tag: str) -> str:
    return (
        f'<{tag} i:type="{kind}">{_element("SqlExpression", expression)}'
        f"{_element('CompatibilityLevel', SQL_COMPATIBILITY_LEVEL)}{_key_values('Parameters', parameters)}</{tag}>"
    )


def filter_xml(rule_filter: RuleFilter) -> str:
    match rule_filter:
        case CorrelationFilter():
            fields = "".join(
                _element(element, str(getattr(rule_filter, attribute)))
                for attribute, element in CORRELATION_FIELDS
                if getattr(rule_filter, attribute) is not None
            )
            properties = _key_values("Properties", rule_filter.properties)
            return f'<Filter i:type="CorrelationFilter">{fields}{properties}</Filter>'
        case TrueFilter():
            return _sql("TrueFilter", "1=1", None, "Filter")
        case FalseFilter():
            return _sql("FalseFilter", "1=0", None, "Filter")
        case SqlFilter():
            return _sql("SqlFilter", rule_filter.expression, rule_filter.parameters, "Filter")
    raise TypeError(f"unsupported rule filter {type(rule_filter).__name__}")


def action_xml(action: SqlAction | None) -> str:
    if action is None or not action.expression:
        return '<Action i:type="EmptyRuleAction"/>'
    return _sql("SqlRuleAction", action.expression, action.parameters, "Action")


def rule_xml(rule: Rule, *, root: str = "RuleDescription", namespaces: bool = True) -> str:
    declarations = f' xmlns="{SB}" xmlns:i="{XSI}"' if namespaces else ""
    created = _element("CreatedAt", datetime_text(None if rule.created_at is None else to_datetime(rule.created_at)))
    return (
        f"<{root}{declarations}>{filter_xml(rule.filter)}{action_xml(rule.action)}{created}"
        f"{_element('Name', rule.name)}</{root}>"
    )


def namespace_info_xml(name: str, *, sku: str, messaging_units: int | None) -> str:
    units = "" if messaging_units is None else _element("MessagingUnits", str(messaging_units))
    return (
        f'<NamespaceInfo xmlns="{SB}" xmlns:i="{XSI}">{_element("MessagingSKU", sku)}{units}'
        f"{_element('Name', name)}{_element('NamespaceType', 'Messaging')}</NamespaceInfo>"
    )


# --- documents ----------------------------------------------------------------------------------


def entry(*, url: str, title: str, content: str, author: str, published: str, updated: str) -> str:
    """One Atom entry around a description, as the service writes it: published and updated are
    the entity's creation and last update, the author the namespace's name."""
    return (
        f'<entry xmlns="{ATOM}">{_element("id", url)}{_element("title", title, _TEXT)}'
        f"{_element('published', published)}{_element('updated', updated)}"
        f'<author>{_element("name", author)}</author><link rel="self" href={quoteattr(url)}/>'
        f'<content type="application/xml">{content}</content></entry>'
    )


def feed(*, url: str, title: str, entries: Iterable[str], updated: str, next_url: str | None = None) -> str:
    """An Atom feed of entries; a `next` link when more pages follow (the SDK pages only when the
    feed has exactly two links, self and next)."""
    links = f'<link rel="self" href={quoteattr(url)}/>'
    if next_url is not None:
        links += f'<link rel="next" href={quoteattr(next_url)}/>'
    return (
        f'<feed xmlns="{ATOM}">{_element("title", title, _TEXT)}{_element("id", url)}'
        f"{_element('updated', updated)}{links}{''.join(entries)}</feed>"
    )


def empty_feed(updated: str) -> str:
    """What the service answers a GET of a name that holds no queue or topic: an empty feed
    (the SDK's `get_queue`/`get_topic` turn it into ResourceNotFoundError)."""
    return (
        f'<feed xmlns="{ATOM}"><title type="text">Publicly Listed Services</title>'
        '<subtitle type="text">This is the list of publicly-listed services currently available.</subtitle>'
        f"<id>uuid:00000000-0000-0000-0000-000000000000;id=1</id>{_element('updated', updated)}"
        "<generator>Service Bus 1.1</generator></feed>"
    )


def error(code: int, detail: str) -> str:
    return f"<Error>{_element('Code', str(code))}{_element('Detail', detail)}</Error>"


# --- requests -> values -------------------------------------------------------------------------


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def parse_entry(body: bytes) -> ET.Element:
    """The description element inside a request's `<entry><content>`; 400 for anything else."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise bad_request(f"The request body is not well-formed XML: {exc}") from None
    content = root.find(f"{{{ATOM}}}content") if root.tag == f"{{{ATOM}}}entry" else None
    description = next(iter(content), None) if content is not None else None
    if description is None:
        raise bad_request("The request body must be an Atom entry whose content holds an entity description.")
    return description


def description_kind(description: ET.Element) -> Kind:
    try:
        return Kind(_local(description.tag))
    except ValueError:
        raise bad_request(f"Unsupported entity description '{_local(description.tag)}'.") from None


def _parse_bool(element: str, text: str) -> bool:
    lowered = text.strip().lower()
    if lowered not in ("true", "false"):
        raise bad_request(f"{element}: '{text}' is not a boolean.")
    return lowered == "true"


def _parse_int(element: str, text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise bad_request(f"{element}: '{text}' is not an integer.") from None


def _entity_name(address: str) -> str:
    """A forwarding target as the model holds it: `sb://host/name` -> `name`."""
    if "://" in address:
        return address.split("://", 1)[1].partition("/")[2]
    return address


def _parse_field(field: Field, text: str) -> Any:
    if field.type == "bool":
        return _parse_bool(field.element, text)
    if field.type == "int":
        return _parse_int(field.element, text)
    if field.type == "entity":
        return _entity_name(text) or None
    return text  # durations stay ISO 8601 text: the model parses and judges them


def parse_description(description: ET.Element, *, replacing: bool = False) -> dict[str, Any]:
    """The writable values a queue, topic or subscription description carries, by SDK name.
    Elements the client may not set (counts, timestamps) are ignored, as the service ignores them.

    `replacing` (an update, `If-Match: *`): the body is the whole description, so an optional
    element it leaves out (ForwardTo, UserMetadata...) is cleared, as the SDK leaves out a None."""
    kind = description_kind(description)
    writable = {f.element: f for f in FIELDS.get(kind, ()) if f.writable}
    values: dict[str, Any] = {f.attribute: None for f in writable.values() if f.optional} if replacing else {}
    for child in description:
        field = writable.get(_local(child.tag))
        if field is None:
            continue
        if child.get(f"{{{XSI}}}nil") == "true":
            values[field.attribute] = None
            continue
        values[field.attribute] = _parse_field(field, child.text or "")
    return values


def _parse_key_values(parent: ET.Element | None) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if parent is None:
        return values
    for item in parent.findall(f"{{{SB}}}KeyValueOfstringanyType"):
        key, value = item.find(f"{{{SB}}}Key"), item.find(f"{{{SB}}}Value")
        if key is None or value is None:
            raise bad_request("A rule parameter lacks its Key or Value.")
        xsd_type = (value.get(f"{{{XSI}}}type") or "string").rsplit(":", 1)[-1]
        values[key.text or ""] = _parse_key_value(xsd_type, value.text or "")
    return values


def _parse_key_value(xsd_type: str, text: str) -> Any:
    if xsd_type in ("int", "long"):
        return _parse_int("Value", text)
    if xsd_type == "boolean":
        return _parse_bool("Value", text)
    if xsd_type == "double":
        try:
            return float(text)
        except ValueError:
            raise bad_request(f"Value: '{text}' is not a double.") from None
    if xsd_type == "dateTime":
        try:
            return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise bad_request(f"Value: '{text}' is not a dateTime.") from None
    if xsd_type == "duration":
        try:
            return durations.duration_timedelta(text)
        except ValueError:
            raise bad_request(f"Value: '{text}' is not a duration.") from None
    return text


def _text(parent: ET.Element, name: str) -> str | None:
    child = parent.find(f"{{{SB}}}{name}")
    return None if child is None else (child.text or "")


def parse_filter(element: ET.Element | None) -> RuleFilter:
    """A rule's `<Filter i:type=...>` as the model's filter record (None: the service's default, true)."""
    if element is None:
        return TrueFilter()
    filter_type = (element.get(f"{{{XSI}}}type") or "SqlFilter").rsplit(":", 1)[-1]
    if filter_type == "TrueFilter":
        return TrueFilter()
    if filter_type == "FalseFilter":
        return FalseFilter()
    if filter_type == "CorrelationFilter":
        fields = {attribute: _text(element, name) for attribute, name in CORRELATION_FIELDS}
        properties = _parse_key_values(element.find(f"{{{SB}}}Properties")) or None
        return CorrelationFilter(**fields, properties=properties)
    if filter_type == "SqlFilter":
        expression = _text(element, "SqlExpression")
        if not expression:
            raise bad_request("A SqlFilter needs a SqlExpression.")
        return SqlFilter(expression, _parse_key_values(element.find(f"{{{SB}}}Parameters")) or None)
    raise bad_request(f"Unsupported filter type '{filter_type}'.")


def parse_action(element: ET.Element | None) -> SqlAction | None:
    if element is None:
        return None
    action_type = (element.get(f"{{{XSI}}}type") or "EmptyRuleAction").rsplit(":", 1)[-1]
    if action_type == "EmptyRuleAction":
        return None
    if action_type != "SqlRuleAction":
        raise bad_request(f"Unsupported action type '{action_type}'.")
    parameters = _parse_key_values(element.find(f"{{{SB}}}Parameters")) or None
    return SqlAction(_text(element, "SqlExpression") or "", parameters)


def parse_rule(description: ET.Element) -> tuple[RuleFilter, SqlAction | None]:
    """(filter, action) of a `RuleDescription` or a subscription's `DefaultRuleDescription`."""
    return parse_filter(description.find(f"{{{SB}}}Filter")), parse_action(description.find(f"{{{SB}}}Action"))


def default_rule(description: ET.Element) -> Rule | None:
    """The `DefaultRuleDescription` a subscription is created with, if any."""
    element = description.find(f"{{{SB}}}DefaultRuleDescription")
    if element is None:
        return None
    rule_filter, action = parse_rule(element)
    return Rule(_text(element, "Name") or DEFAULT_RULE_NAME, rule_filter, action)
