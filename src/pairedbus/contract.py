"""The contract: every name and number of the spec (`shared/spec/`), stated once.

Components, policies, the syphon, the sender and the Spark pipeline import from here; nothing
else restates a backlog property, an alias, a limit or the ping content type.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Final

from pairedbus.durations import durations_equal

# --- Backlog queues (paired-namespaces.md, "Backlog queues") --------------------------------

BACKLOG_QUEUE_SEGMENT: Final = "x-servicebus-transfer"
DEFAULT_BACKLOG_QUEUE_COUNT: Final = 10
#: The stack-config key of the backlog queue count (`pairedbus:backlogQueueCount`), and the backlog-queue-set
#: policy's setting of the same name; in Python it is `backlog_queue_count` throughout.
BACKLOG_QUEUE_COUNT_KEY: Final = "backlogQueueCount"

#: .NET TimeSpan.MaxValue (10675199 days 02:48:05.4775807) in ISO 8601, as the service reads it back.
TIMESPAN_MAX_ISO: Final = "P10675199DT2H48M5.4775807S"
#: Its value in ticks, `TIMESPAN_MAX_TICKS`, lives with the tick arithmetic in `pairedbus.durations`.
INT32_MAX: Final = 2_147_483_647

#: The exact backlog-queue property table in ARM / azure-native camelCase names.
BACKLOG_QUEUE_PROPERTIES: Final[dict[str, object]] = {
    "maxSizeInMegabytes": 5120,
    "maxDeliveryCount": INT32_MAX,
    "defaultMessageTimeToLive": TIMESPAN_MAX_ISO,
    "autoDeleteOnIdle": TIMESPAN_MAX_ISO,
    "lockDuration": "PT1M",
    "deadLetteringOnMessageExpiration": True,
    "enableBatchedOperations": True,
}
#: Table properties whose values are ISO 8601 durations (compared as durations, not strings).
DURATION_PROPERTIES: Final = frozenset(
    {"defaultMessageTimeToLive", "autoDeleteOnIdle", "lockDuration", "duplicateDetectionHistoryTimeWindow"}
)
#: ARM camelCase name -> azure-servicebus `QueueProperties` attribute / `create_queue` keyword.
ARM_TO_SDK_QUEUE_FIELD: Final[dict[str, str]] = {
    "maxSizeInMegabytes": "max_size_in_megabytes",
    "maxDeliveryCount": "max_delivery_count",
    "defaultMessageTimeToLive": "default_message_time_to_live",
    "autoDeleteOnIdle": "auto_delete_on_idle",
    "lockDuration": "lock_duration",
    "deadLetteringOnMessageExpiration": "dead_lettering_on_message_expiration",
    "enableBatchedOperations": "enable_batched_operations",
    "enablePartitioning": "enable_partitioning",
    "requiresSession": "requires_session",
    "requiresDuplicateDetection": "requires_duplicate_detection",
}
#: Partitioning is the one property beyond the table a backlog queue may carry, and only where
#: its namespace requires it (Premium with >= 2 messaging partitions).
BACKLOG_PARTITIONING_PROPERTY: Final = "enablePartitioning"

_BACKLOG_NAME = re.compile(rf"^(?P<primary>[^/]+)/{BACKLOG_QUEUE_SEGMENT}/(?P<index>0|[1-9][0-9]*)$")


def backlog_queue_prefix(primary_namespace: str) -> str:
    """`contoso` -> `contoso/x-servicebus-transfer/`: every backlog queue name starts with it."""
    return f"{primary_namespace}/{BACKLOG_QUEUE_SEGMENT}/"


def backlog_queue_name(primary_namespace: str, index: int) -> str:
    """The index-th backlog queue for a primary namespace, e.g. `contoso/x-servicebus-transfer/0`."""
    if index < 0:
        raise ValueError(f"backlog queue index must be >= 0, got {index}")
    return f"{backlog_queue_prefix(primary_namespace)}{index}"


def backlog_queue_names(primary_namespace: str, count: int) -> list[str]:
    return [backlog_queue_name(primary_namespace, i) for i in range(count)]


def parse_backlog_queue_name(name: str) -> tuple[str, int] | None:
    """(primary namespace, index) for a backlog queue name, or None for any other entity name."""
    match = _BACKLOG_NAME.match(name)
    if match is None:
        return None
    return match["primary"], int(match["index"])


def is_backlog_queue_name(name: str) -> bool:
    return parse_backlog_queue_name(name) is not None


#: ARM reserves '/', so Service Bus shows an entity `a/b` to ARM (ids, names, the portal) as `a~b`.
ARM_PATH_SEPARATOR: Final = "~"


def entity_name_from_arm(arm_name: str) -> str:
    """`contoso~x-servicebus-transfer~0` (as ARM lists it) -> `contoso/x-servicebus-transfer/0`."""
    return arm_name.replace(ARM_PATH_SEPARATOR, "/")


def arm_entity_name(entity_name: str) -> str:
    return entity_name.replace("/", ARM_PATH_SEPARATOR)


# --- Comparing the backlog table's values (durations as durations: `pairedbus.durations`) -------


def backlog_value_matches(prop: str, expected: object, actual: object) -> bool:
    """Whether a live or declared value equals the table's, comparing durations as durations."""
    if prop in DURATION_PROPERTIES:
        try:
            return actual is not None and durations_equal(expected, actual)  # type: ignore[arg-type]  # a duration property's values: ISO 8601 strings or timedeltas; a wrong one raises ValueError
        except ValueError:
            return False
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    return expected == actual


# --- Failover sender and pings (paired-namespaces.md, "The failover sender", "Pings") -------

#: Properties cleared on a parked message and stored under these application-property aliases.
ALIAS_PATH: Final = "x-ms-path"
ALIAS_SESSION_ID: Final = "x-ms-sessionid"
ALIAS_TIME_TO_LIVE: Final = "x-ms-timetolive"  # integer milliseconds
#: Erratum: the public table says `x-ms-path`; see paired-namespaces.md.
ALIAS_SCHEDULED_ENQUEUE_TIME: Final = "x-ms-scheduledenqueuetimeutc"
ALIASES: Final = (ALIAS_PATH, ALIAS_SESSION_ID, ALIAS_TIME_TO_LIVE, ALIAS_SCHEDULED_ENQUEUE_TIME)

PING_CONTENT_TYPE: Final = "application/vnd.ms-servicebus-ping"
PING_TIME_TO_LIVE: Final = timedelta(seconds=1)

DEFAULT_FAILOVER_INTERVAL: Final = timedelta(minutes=1)
MIN_FAILOVER_INTERVAL: Final = timedelta(0)
MAX_FAILOVER_INTERVAL: Final = timedelta(minutes=60)
DEFAULT_PING_PRIMARY_INTERVAL: Final = timedelta(minutes=1)
MIN_PING_PRIMARY_INTERVAL: Final = timedelta(seconds=1)
MAX_PING_PRIMARY_INTERVAL: Final = timedelta(minutes=30)

#: The message-size limit failover must respect once aliases are added (256 KB).
MAX_MESSAGE_SIZE_BYTES: Final = 256 * 1024

# --- Syphon and cost (paired-namespaces.md, "The syphon", "Close/fault behaviour") ----------

SYPHON_LONG_POLL: Final = timedelta(minutes=15)
SYPHON_RECEIVES_PER_HOUR_PER_QUEUE: Final = int(timedelta(hours=1) / SYPHON_LONG_POLL)  # 4
#: A message through the backlog is billed four times: send/receive backlog, send/receive primary.
BILLED_OPERATIONS_PER_BACKLOGGED_MESSAGE: Final = 4
#: Of those, the two hops a message would not make without pairing.
EXTRA_OPERATIONS_PER_BACKLOGGED_MESSAGE: Final = 2
CLOSE_FAULT_GRACE: Final = timedelta(seconds=5)
#: Dead-letter reason when a parked message's time to live ran out in the backlog.
DEAD_LETTER_TTL_EXPIRED_IN_BACKLOG: Final = "TTLExpiredInBacklog"

# --- Duplicates (paired-namespaces.md, "The syphon", "Duplicates") ---------------------------

#: The longest primary outage a pair must absorb when the stack does not say (`pairedbus:maxOutage`).
#: A duplicate (a timed-out send that was stored and parked too; a syphon move repeated after a
#: failed complete) reaches the primary up to an outage after the original, so a paired entity's
#: duplicate detection must remember MessageIds at least this long. The default, one hour, equals
#: the longest failover interval the sender allows (MAX_FAILOVER_INTERVAL), well inside the service's
#: 7-day maximum window; a longer window makes the service keep more MessageIds, so stacks that must
#: ride out longer outages raise it.
DEFAULT_MAX_OUTAGE: Final = "PT1H"
#: The service's duplicate-detection window when an entity sets none: "The default value is 10
#: minutes" (ARM SBQueueProperties / SBTopicProperties `duplicateDetectionHistoryTimeWindow`).
SERVICE_DEFAULT_DUPLICATE_DETECTION_WINDOW: Final = "PT10M"

# --- Tiers, partitioning and limits (partitioning.md) ---------------------------------------

SKU_STANDARD: Final = "Standard"
SKU_PREMIUM: Final = "Premium"
SKUS: Final = (SKU_STANDARD, SKU_PREMIUM)
MEGABYTES_PER_GIGABYTE: Final = 1024
STANDARD_ENTITY_SIZES_MB: Final = tuple(g * MEGABYTES_PER_GIGABYTE for g in (1, 2, 3, 4, 5))
PREMIUM_ENTITY_SIZES_MB: Final = tuple(g * MEGABYTES_PER_GIGABYTE for g in (1, 2, 3, 4, 5, 10, 20, 40, 80))
ENTITY_SIZES_MB: Final = {SKU_STANDARD: STANDARD_ENTITY_SIZES_MB, SKU_PREMIUM: PREMIUM_ENTITY_SIZES_MB}
DEFAULT_ENTITY_SIZE_MB: Final = 1 * MEGABYTES_PER_GIGABYTE
#: Fragments the service makes for a partitioned entity; a Standard partitioned entity reports
#: this many times its configured size (5 GB -> 80 GB).
PARTITIONS_PER_ENTITY: Final = {SKU_STANDARD: 16, SKU_PREMIUM: 2}
PREMIUM_MESSAGING_PARTITIONS: Final = (1, 2, 4)
MIN_PREMIUM_PARTITIONS_FOR_ENTITIES: Final = 2
MAX_PARTITIONED_ENTITIES_PER_STANDARD_NAMESPACE: Final = 100


def effective_partitions(premium_messaging_partitions: int | None) -> int:
    """Premium messaging partitions in effect: the service default is 1."""
    return int(premium_messaging_partitions or 1)


def requires_partitioned_entities(sku: str | None, premium_messaging_partitions: int | None) -> bool:
    """A Premium namespace with >= 2 partitions holds only partitioned queues and topics."""
    return (
        sku == SKU_PREMIUM and effective_partitions(premium_messaging_partitions) >= MIN_PREMIUM_PARTITIONS_FOR_ENTITIES
    )


def configured_size_mb(reported_mb: int, *, partitioned: bool, expected_mb: int | None = None) -> int:
    """The size an entity was configured with, from the size the service reports for it.

    The service reports a partitioned entity's size summed over its fragments (16 x 5120 = 81920
    on Standard). Given the expected size, a reported multiple for either tier maps back to it.
    """
    if partitioned and expected_mb is not None and reported_mb != expected_mb:
        if reported_mb in {expected_mb * n for n in PARTITIONS_PER_ENTITY.values()}:
            return expected_mb
    return reported_mb


MAX_ENTITIES_PER_NAMESPACE: Final = 10_000
#: The range of a pair's backlog queue count (`BACKLOG_QUEUE_COUNT_KEY`): at least one backlog queue (indices
#: `[0, BacklogQueueCount)`), and no more than a namespace holds. Every check of the count reads these two.
MIN_BACKLOG_QUEUE_COUNT: Final = 1
MAX_BACKLOG_QUEUE_COUNT: Final = MAX_ENTITIES_PER_NAMESPACE
#: Client operation timeout must exceed this so the service can re-route to another fragment.
MIN_CLIENT_OPERATION_TIMEOUT: Final = timedelta(seconds=15)
RECOMMENDED_CLIENT_OPERATION_TIMEOUT: Final = timedelta(seconds=60)

# --- Names --------------------------------------------------------------------------------

#: The service's namespace-name rule: ARM's namespaceName is minLength 6, maxLength 50 (azure-rest-api-specs,
#: servicebus parameters); Microsoft's naming rules add letters, digits and hyphens, starting with a letter,
#: ending with a letter or digit, not ending in "-sb" or "-mgmt". The name is a DNS label, so the service
#: compares it without regard to case: "-SB" ends it too.
NAMESPACE_NAME_MIN: Final = 6
NAMESPACE_NAME_MAX: Final = 50
NAMESPACE_NAME_PATTERN: Final = re.compile(r"^[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?$")
NAMESPACE_NAME_FORBIDDEN_SUFFIXES: Final = ("-sb", "-mgmt")
#: The rule in words, for the one-line error that refuses a name.
NAMESPACE_NAME_RULE: Final = (
    f"{NAMESPACE_NAME_MIN}-{NAMESPACE_NAME_MAX} letters, digits or '-', starting with a letter, ending with a letter "
    "or digit, not ending in -sb or -mgmt (in any letter case)"
)
#: azure-sdk-for-net Administration: QueueNameMaximumLength = TopicNameMaximumLength = 260,
#: SubscriptionNameMaximumLength = 50.
ENTITY_NAME_MAX: Final = 260
SUBSCRIPTION_NAME_MAX: Final = 50

# --- Security baseline ----------------------------------------------------------------------

MINIMUM_TLS_VERSION: Final = "1.2"

#: Built-in Azure role definition ids (the same GUID in every subscription).
ROLE_SERVICE_BUS_DATA_OWNER: Final = "090c5cfd-751d-490a-894a-3ce6f1109419"
ROLE_SERVICE_BUS_DATA_SENDER: Final = "69a216fc-b8fb-44d8-bc22-1f3c2cd27a39"
ROLE_SERVICE_BUS_DATA_RECEIVER: Final = "4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0"
ROLE_ACR_PULL: Final = "7f951dda-4ed3-4680-a7ca-43fe172d538d"
#: Control-plane read only (no messages, no keys): lets the syphon list backlog queues via ARM.
ROLE_READER: Final = "acdd72a7-3385-48ef-bd42-f606fba81ae7"

# --- Resource type tokens (components and policies agree on these) --------------------------

PACKAGE: Final = "pairedbus"
TYPE_NAMESPACE: Final = "azure-native:servicebus:Namespace"
TYPE_QUEUE: Final = "azure-native:servicebus:Queue"
TYPE_TOPIC: Final = "azure-native:servicebus:Topic"
TYPE_SUBSCRIPTION: Final = "azure-native:servicebus:Subscription"
#: Pulumi's type for a Python dynamic resource declared without a module and name.
TYPE_DYNAMIC_RESOURCE: Final = "pulumi-python:dynamic:Resource"
#: The backlog queue's dynamic resource (`pulumi.dynamic.Resource`, module "pairedbus").
TYPE_BACKLOG_QUEUE: Final = "pulumi-python:dynamic/pairedbus:BacklogQueue"
#: Types that may carry a queue: a dynamic resource is queue-like when it has `queueName` and
#: `namespaceName` inputs.
QUEUE_LIKE_TYPES: Final = frozenset({TYPE_QUEUE, TYPE_BACKLOG_QUEUE, TYPE_DYNAMIC_RESOURCE})


#: This project's component tokens: `<package>:index:<class name>`, what Pulumi's component provider serves
#: (`pulumi.provider.experimental` puts every component in the `index` module) and what each registers.
TYPE_NAMESPACE_PAIR: Final = f"{PACKAGE}:index:NamespacePair"
TYPE_BACKLOG_QUEUES: Final = f"{PACKAGE}:index:BacklogQueues"
TYPE_MESSAGING_ENTITIES: Final = f"{PACKAGE}:index:MessagingEntities"
TYPE_SYPHON_HOST: Final = f"{PACKAGE}:index:SyphonHost"
#: The one component a program builds; `index` and the class name, as Pulumi's component providers require.
TYPE_PAIRED_NAMESPACE: Final = f"{PACKAGE}:index:PairedNamespace"
#: The parts' tokens before pairedbus 0.2, which existing stacks hold (each part aliases its old token).
LEGACY_PART_TYPES: Final = {
    TYPE_NAMESPACE_PAIR: f"{PACKAGE}:namespaces:NamespacePair",
    TYPE_BACKLOG_QUEUES: f"{PACKAGE}:backlog:BacklogQueues",
    TYPE_MESSAGING_ENTITIES: f"{PACKAGE}:entities:MessagingEntities",
    TYPE_SYPHON_HOST: f"{PACKAGE}:syphon:SyphonHost",
}
#: Tags that mark a namespace's role in a pair (read by the audit and the policies).
TAG_ROLE: Final = "pairedbus-role"
TAG_PAIR: Final = "pairedbus-pair"
#: On the secondary namespace: the backlog queue count the pair was deployed with, so the inventory and
#: the audit judge the backlog set as the policy pack and `drift` do (extras allowed, missing indices flagged).
TAG_BACKLOG_QUEUE_COUNT: Final = "pairedbus-backlog-queue-count"
ROLE_PRIMARY: Final = "primary"
ROLE_SECONDARY: Final = "secondary"


def is_namespace_name(name: str) -> bool:
    """Whether `name` is a valid Service Bus namespace name (`NAMESPACE_NAME_RULE`)."""
    return (
        NAMESPACE_NAME_MIN <= len(name) <= NAMESPACE_NAME_MAX
        and NAMESPACE_NAME_PATTERN.match(name) is not None
        and not name.lower().endswith(NAMESPACE_NAME_FORBIDDEN_SUFFIXES)
    )


def service_bus_fqdn(namespace_name: str) -> str:
    """The data-plane host of a namespace in Azure's public cloud."""
    return f"{namespace_name}.servicebus.windows.net"


def namespace_from_fqdn(fqdn: str) -> str:
    """The namespace name (first DNS label) of a fully qualified namespace."""
    return fqdn.split(".", 1)[0]


# --- Spark pipeline (issue 6) ---------------------------------------------------------------

#: The backlog-queue name pattern as a regex source, for engines that match names without Python
#: (Spark SQL `rlike`, DuckDB `regexp_matches`); the same expression `parse_backlog_queue_name` uses.
BACKLOG_QUEUE_NAME_PATTERN: Final = _BACKLOG_NAME.pattern
