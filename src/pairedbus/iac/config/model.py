"""The stack config model: what `stacks/Pulumi.<stack>.yaml` may say under the `pairedbus:` key.

Validation happens in two passes so that every problem is reported at once, each on one line
naming its key path: pydantic checks the shape and each field on its own, then
`cross_field_problems` applies the rules that need several fields (tier sizes, partitions,
uniqueness, the per-namespace limits). Nothing is registered with Pulumi until both pass.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from pairedbus import contract

CONFIG_NAMESPACE = "pairedbus"


class StackConfigError(ValueError):
    """A stack config that cannot be deployed; one line per problem, each naming its key path."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


def _check_duration(value: str | None) -> str | None:
    if value is not None:
        try:
            contract.duration_ticks(value)
        except ValueError:
            raise ValueError(f"expected an ISO 8601 duration such as PT1M or P14D, got {value!r}") from None
    return value


def _check_entity_name(value: str, max_length: int) -> str:
    ok_chars = all(c.isascii() and (c.isalnum() or c in "._-") for c in value)
    if not (1 <= len(value) <= max_length) or not ok_chars or not (value[0].isalnum() and value[-1].isalnum()):
        raise ValueError(
            f"expected 1-{max_length} letters, digits, '.', '-' or '_', starting and ending with a "
            f"letter or digit ('/' is reserved: ARM cannot create such names), got {value!r}"
        )
    return value


Duration = Annotated[str | None, Field(default=None)]
DeliveryCount = Annotated[int | None, Field(default=None, ge=1, le=contract.INT32_MAX)]


class ResourceGroupConfig(_Model):
    name: Annotated[str, Field(min_length=1, max_length=90)]
    #: false: the group exists and is only referenced.
    create: bool = True


class ResourceGroupsConfig(_Model):
    primary: ResourceGroupConfig
    secondary: ResourceGroupConfig


class NamespaceConfig(_Model):
    name: str
    location: Annotated[str, Field(min_length=1)]
    sku: Literal["Standard", "Premium"] = contract.SKU_STANDARD
    #: Premium messaging units; Standard has none.
    capacity: Literal[1, 2, 4, 8, 16] | None = None
    premium_messaging_partitions: Literal[1, 2, 4] | None = None
    zone_redundant: bool = False
    public_network_access: Literal["Enabled", "Disabled", "SecuredByPerimeter"] = "Enabled"

    @field_validator("name")
    @classmethod
    def _namespace_name(cls, value: str) -> str:
        if (
            not contract.NAMESPACE_NAME_MIN <= len(value) <= contract.NAMESPACE_NAME_MAX
            or not contract.NAMESPACE_NAME_PATTERN.match(value)
            or value.endswith(contract.NAMESPACE_NAME_FORBIDDEN_SUFFIXES)
        ):
            raise ValueError(
                f"expected {contract.NAMESPACE_NAME_MIN}-{contract.NAMESPACE_NAME_MAX} letters, digits "
                "or '-', starting with a letter, not ending in "
                f"{', '.join(repr(s) for s in contract.NAMESPACE_NAME_FORBIDDEN_SUFFIXES)}, got {value!r}"
            )
        return value

    @property
    def is_premium(self) -> bool:
        return self.sku == contract.SKU_PREMIUM

    @property
    def partitions(self) -> int:
        return contract.effective_partitions(self.premium_messaging_partitions)

    @property
    def messaging_units(self) -> int | None:
        """Premium capacity in effect: as configured, else one unit per partition."""
        return (self.capacity or self.partitions) if self.is_premium else None

    @property
    def requires_partitioned_entities(self) -> bool:
        return contract.requires_partitioned_entities(self.sku, self.premium_messaging_partitions)


class _EntityOptions(_Model):
    lock_duration: Duration = None
    max_delivery_count: DeliveryCount = None
    default_message_time_to_live: Duration = None
    dead_lettering_on_message_expiration: bool | None = None
    forward_to: str | None = None

    _durations = field_validator("lock_duration", "default_message_time_to_live")(
        classmethod(lambda cls, v: _check_duration(v))
    )


class SubscriptionConfig(_EntityOptions):
    name: str
    requires_session: bool = False

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _check_entity_name(value, contract.SUBSCRIPTION_NAME_MAX)


class _PrimaryEntity(_Model):
    name: str
    max_size_in_megabytes: int = contract.DEFAULT_ENTITY_SIZE_MB
    enable_partitioning: bool = True
    #: Paired senders write here; a repeated syphon move must then be dropped as a duplicate.
    paired: bool = True
    requires_duplicate_detection: bool | None = None
    duplicate_detection_history_time_window: Duration = None
    default_message_time_to_live: Duration = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _check_entity_name(value, contract.ENTITY_NAME_MAX)

    @field_validator("duplicate_detection_history_time_window", "default_message_time_to_live")
    @classmethod
    def _duration(cls, value: str | None) -> str | None:
        return _check_duration(value)

    @property
    def duplicate_detection(self) -> bool:
        """On unless said otherwise for entities paired senders write to."""
        if self.requires_duplicate_detection is None:
            return self.paired
        return self.requires_duplicate_detection


class QueueConfig(_PrimaryEntity):
    requires_session: bool = False
    lock_duration: Duration = None
    max_delivery_count: DeliveryCount = None
    dead_lettering_on_message_expiration: bool | None = None
    forward_to: str | None = None

    @field_validator("lock_duration")
    @classmethod
    def _lock(cls, value: str | None) -> str | None:
        return _check_duration(value)


class TopicConfig(_PrimaryEntity):
    subscriptions: list[SubscriptionConfig] = Field(default_factory=list)


class RegistryConfig(_Model):
    server: Annotated[str, Field(min_length=1)]
    #: ARM id of the container registry; the syphon identity gets AcrPull on it.
    resource_id: Annotated[str, Field(pattern=r"^/subscriptions/.+/providers/Microsoft\.ContainerRegistry/registries/.+$")]


class SyphonConfig(_Model):
    image: Annotated[str, Field(min_length=1)]
    #: Container Apps consumption sizes: memory is twice the CPU in GiB.
    cpu: Literal[0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0] = 0.5
    memory: str = "1Gi"
    min_replicas: Annotated[int, Field(ge=1, le=30)] = 1
    max_replicas: Annotated[int, Field(ge=1, le=30)] = 1
    log_retention_days: Annotated[int, Field(ge=30, le=730)] = 30
    registry: RegistryConfig | None = None
    #: Where the syphon runs; defaults to the primary namespace's region.
    location: str | None = None


class StackConfig(_Model):
    production: bool = False
    resource_groups: ResourceGroupsConfig
    primary: NamespaceConfig
    secondary: NamespaceConfig
    backlog_queue_count: Annotated[int, Field(ge=1, le=contract.MAX_ENTITIES_PER_NAMESPACE)] = (
        contract.DEFAULT_BACKLOG_QUEUE_COUNT
    )
    #: "entra" (default): the backlog provider signs in with Entra ID. "sas": documented fallback
    #: for azure-service-bus#344 (RBAC on names with '/'); needs local auth on the secondary.
    backlog_auth: Literal["entra", "sas"] = "entra"
    queues: list[QueueConfig] = Field(default_factory=list)
    topics: list[TopicConfig] = Field(default_factory=list)
    tags: dict[str, str] = Field(default_factory=dict)
    syphon: SyphonConfig

    @property
    def backlog_queue_names(self) -> list[str]:
        return contract.backlog_queue_names(self.primary.name, self.backlog_queue_count)


# --- Rules that need more than one field ----------------------------------------------------


def _entity_problems(config: StackConfig) -> Iterable[str]:
    ns = config.primary
    sizes = contract.ENTITY_SIZES_MB[ns.sku]
    seen: dict[str, str] = {}
    entities: list[tuple[str, _PrimaryEntity]] = [
        *((f"queues[{i}]", q) for i, q in enumerate(config.queues)),
        *((f"topics[{i}]", t) for i, t in enumerate(config.topics)),
    ]
    names = {e.name.lower() for _, e in entities}
    for path, entity in entities:
        key = entity.name.lower()  # entity paths are case-insensitive in Service Bus
        if key in seen:
            yield f"{path}.name: expected a name unique among queues and topics, {entity.name!r} is also {seen[key]}"
        seen.setdefault(key, path)
        if entity.max_size_in_megabytes not in sizes:
            yield (
                f"{path}.maxSizeInMegabytes: expected one of {', '.join(map(str, sizes))} for a {ns.sku} "
                f"namespace, got {entity.max_size_in_megabytes}"
            )
        if ns.is_premium and not entity.enable_partitioning:
            yield f"{path}.enablePartitioning: expected true: every Premium queue and topic is partitioned"
        forward = getattr(entity, "forward_to", None)
        if forward is not None and forward.lower() not in names:
            yield f"{path}.forwardTo: expected a queue or topic of this stack's primary, got {forward!r}"
        if forward is not None and forward.lower() == key:
            yield f"{path}.forwardTo: expected another entity, an entity cannot forward to itself"
        for j, sub in enumerate(getattr(entity, "subscriptions", [])):
            if sub.forward_to is not None and sub.forward_to.lower() not in names:
                yield f"{path}.subscriptions[{j}].forwardTo: expected a queue or topic of this stack's primary, got {sub.forward_to!r}"
        sub_names = [s.name.lower() for s in getattr(entity, "subscriptions", [])]
        for j, sub_name in enumerate(sub_names):
            if sub_name in sub_names[:j]:
                yield f"{path}.subscriptions[{j}].name: expected a name unique within topic {entity.name!r}, got {sub_name!r} twice"
    forwards = {q.name.lower(): q.forward_to.lower() for q in config.queues if q.forward_to}
    for i, queue in enumerate(config.queues):
        seen_chain, current = [], queue.name.lower()
        while current in forwards and current not in seen_chain:
            seen_chain.append(current)
            current = forwards[current]
        if current == queue.name.lower() and len(seen_chain) > 1:
            yield f"queues[{i}].forwardTo: expected no forwarding cycle, got {' -> '.join([*seen_chain, current])}"
    if ns.is_premium and entities and ns.partitions < contract.MIN_PREMIUM_PARTITIONS_FOR_ENTITIES:
        yield (
            f"primary.premiumMessagingPartitions: expected >= {contract.MIN_PREMIUM_PARTITIONS_FOR_ENTITIES} "
            f"for a Premium namespace holding queues or topics, got {ns.partitions}"
        )
    partitioned = sum(1 for _, e in entities if e.enable_partitioning)
    if not ns.is_premium and partitioned > contract.MAX_PARTITIONED_ENTITIES_PER_STANDARD_NAMESPACE:
        yield (
            f"queues/topics: expected at most {contract.MAX_PARTITIONED_ENTITIES_PER_STANDARD_NAMESPACE} "
            f"partitioned entities in Standard namespace {ns.name!r}, got {partitioned}"
        )
    if not ns.is_premium and len(entities) > contract.MAX_ENTITIES_PER_NAMESPACE:
        yield f"queues/topics: expected at most {contract.MAX_ENTITIES_PER_NAMESPACE} entities, got {len(entities)}"


def _namespace_problems(config: StackConfig) -> Iterable[str]:
    for role in ("primary", "secondary"):
        ns: NamespaceConfig = getattr(config, role)
        if not ns.is_premium:
            if ns.capacity is not None:
                yield f"{role}.capacity: expected no capacity for a Standard namespace (messaging units are Premium only), got {ns.capacity}"
            if ns.premium_messaging_partitions is not None:
                yield f"{role}.premiumMessagingPartitions: expected none for a Standard namespace, got {ns.premium_messaging_partitions}"
            continue
        capacity = ns.messaging_units or 1
        if capacity % ns.partitions:
            yield f"{role}.capacity: expected a multiple of premiumMessagingPartitions ({ns.partitions}), got {capacity}"
    if config.primary.location.lower() == config.secondary.location.lower():
        yield f"secondary.location: expected a region other than the primary's ({config.primary.location!r})"
    if config.primary.name.lower() == config.secondary.name.lower():
        yield f"secondary.name: expected a namespace other than the primary ({config.primary.name!r})"
    sec = config.secondary
    if sec.is_premium and sec.partitions < contract.MIN_PREMIUM_PARTITIONS_FOR_ENTITIES:
        yield (
            f"secondary.premiumMessagingPartitions: expected >= {contract.MIN_PREMIUM_PARTITIONS_FOR_ENTITIES} "
            f"for a Premium namespace holding the backlog queues, got {sec.partitions}"
        )
    if not sec.is_premium and config.backlog_queue_count > contract.MAX_PARTITIONED_ENTITIES_PER_STANDARD_NAMESPACE:
        # The service partitions new Standard queues by default, so backlog queues count too.
        yield (
            f"backlogQueueCount: expected at most {contract.MAX_PARTITIONED_ENTITIES_PER_STANDARD_NAMESPACE} "
            f"in a Standard secondary, got {config.backlog_queue_count}"
        )
    if config.syphon.max_replicas < config.syphon.min_replicas:
        yield f"syphon.maxReplicas: expected >= minReplicas ({config.syphon.min_replicas}), got {config.syphon.max_replicas}"
    expected_memory = f"{config.syphon.cpu * 2:g}Gi"
    if config.syphon.memory not in (expected_memory, f"{config.syphon.cpu * 2:.1f}Gi"):
        yield f"syphon.memory: expected {expected_memory} for {config.syphon.cpu:g} CPU (Container Apps sizes), got {config.syphon.memory!r}"


def cross_field_problems(config: StackConfig) -> list[str]:
    return [*_namespace_problems(config), *_entity_problems(config)]


# --- Loading --------------------------------------------------------------------------------


def _loc(loc: tuple[Any, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _describe(error: Mapping[str, Any]) -> str:
    if error["type"] == "missing":
        return "expected a value, none given"
    if error["type"] == "extra_forbidden":
        return "unknown key (check its spelling against the config reference in README.md)"
    message = str(error["msg"]).removeprefix("Value error, ")
    if message.startswith("expected"):
        return message
    message = message.removeprefix("Input should be ").removeprefix("Input should ")
    return f"expected {message[0].lower()}{message[1:]}, got {error.get('input')!r}"


def _qualified(problem: str) -> str:
    return f"{CONFIG_NAMESPACE}:{problem}"


def parse_stack_config(values: Mapping[str, Any]) -> StackConfig:
    """Validate the `pairedbus:` config (keys without the namespace prefix).

    Raises StackConfigError listing every problem, each as `pairedbus:<path>: expected ...`.
    """
    try:
        config = StackConfig.model_validate(dict(values))
    except ValidationError as exc:
        raise StackConfigError(
            [_qualified(f"{_loc(e['loc'])}: {_describe(e)}") for e in exc.errors(include_url=False)]
        ) from None
    problems = cross_field_problems(config)
    if problems:
        raise StackConfigError([_qualified(p) for p in problems])
    return config


def decode_config_value(raw: str) -> Any:
    """Pulumi hands every config value over as a string; structured values are JSON."""
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
        return raw


def config_from_pulumi_settings(settings: Mapping[str, str]) -> dict[str, Any]:
    """`{"pairedbus:primary": "{...}", "azure-native:location": ...}` -> this project's keys, decoded."""
    prefix = f"{CONFIG_NAMESPACE}:"
    return {
        key.removeprefix(prefix): decode_config_value(value)
        for key, value in settings.items()
        if key.startswith(prefix)
    }


def load_pulumi_stack_config() -> StackConfig:
    """The running Pulumi program's validated config; a bad one ends the program with one line
    per problem and no traceback (pulumi.RunError), before any resource is registered."""
    import pulumi
    from pulumi.runtime import config as runtime_config

    settings = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    try:
        return parse_stack_config(config_from_pulumi_settings(settings))
    except StackConfigError as exc:
        raise pulumi.RunError("invalid stack config:\n" + "\n".join(exc.problems)) from None
