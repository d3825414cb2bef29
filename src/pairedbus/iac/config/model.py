"""The stack config model: what `stacks/Pulumi.<stack>.yaml` may say under the `pairedbus:` key.

Validation happens in two passes so that every problem is reported at once, each on one line
naming its key path: pydantic checks the shape and each field on its own (`fields.py`: strict
types, the service's ranges and name rules), then `cross_field_problems` applies the rules that
need several fields (`cross_field.py`, `forwarding.py`). Problems found while reading the stack
file or its keys (`stack_file.py`, `keys.py`) join the same list. Nothing is registered with
Pulumi until all pass.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from pairedbus import contract
from pairedbus.iac.config import limits
from pairedbus.iac.config.cross_field import cross_field_problems
from pairedbus.iac.config.fields import (
    AutoDeleteOnIdle,
    ContainerImage,
    DeliveryCount,
    DuplicateDetectionWindow,
    EntityName,
    LockDuration,
    NamespaceName,
    NotBool,
    OutageDuration,
    PrincipalType,
    Region,
    ResourceGroupName,
    SubscriptionName,
    TimeToLive,
)
from pairedbus.iac.config.keys import (
    CONFIG_NAMESPACE,
    config_from_pulumi_settings,
    decode_config_value,
    key_problems_of,
)
from pairedbus.iac.config.problems import StackConfigError, did_you_mean

__all__ = [
    "CONFIG_NAMESPACE",
    "DEFAULT_MAX_OUTAGE",
    "NamespaceConfig",
    "QueueConfig",
    "RegistryConfig",
    "ResourceGroupConfig",
    "ResourceGroupsConfig",
    "StackConfig",
    "StackConfigError",
    "SubscriptionConfig",
    "SyphonConfig",
    "TopicConfig",
    "config_from_pulumi_settings",
    "cross_field_problems",
    "decode_config_value",
    "load_pulumi_stack_config",
    "parse_stack_config",
]

#: The longest primary outage a pair must absorb unless the stack says otherwise. Duplicates of
#: a message (a send that timed out after the primary stored it, then parked; a syphon move
#: repeated after a failed complete) reach the primary up to an outage after the original, so
#: duplicate detection there must remember MessageIds at least that long. One hour covers the
#: longest failover interval the sender allows (contract.MAX_FAILOVER_INTERVAL) and four syphon
#: long polls (contract.SYPHON_LONG_POLL); a longer window costs throughput and memory in the
#: service's duplicate index, so stacks that must ride out longer outages raise it (up to P7D).
DEFAULT_MAX_OUTAGE = "PT1H"


class _Model(BaseModel):
    #: strict: a bool is not a count, an int is not a string, a YAML date is not a duration.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True, strict=True)


class ResourceGroupConfig(_Model):
    """A resource group the namespaces (and the syphon) live in."""

    name: ResourceGroupName
    #: false: the group exists and is only referenced.
    create: bool = True


class ResourceGroupsConfig(_Model):
    primary: ResourceGroupConfig
    secondary: ResourceGroupConfig


class NamespaceConfig(_Model):
    """One namespace of the pair."""

    name: NamespaceName
    #: An Azure region (name or display name, any case): `westeurope`, `West Europe`.
    location: Region
    sku: Literal["Standard", "Premium"] = contract.SKU_STANDARD
    #: Premium messaging units; Standard has none.
    capacity: Annotated[Literal[1, 2, 4, 8, 16] | None, NotBool] = None
    premium_messaging_partitions: Annotated[Literal[1, 2, 4] | None, NotBool] = None
    zone_redundant: bool = False
    #: Production stacks need `Disabled` (clients then reach a Premium namespace through private
    #: endpoints; a Standard namespace has none, only IP firewall rules, so it cannot be Disabled).
    public_network_access: Literal["Enabled", "Disabled", "SecuredByPerimeter"] = "Enabled"

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
    #: 5 s to 5 min (PT5S..PT5M).
    lock_duration: LockDuration = None
    max_delivery_count: DeliveryCount = None
    #: 1 s up to TimeSpan.MaxValue.
    default_message_time_to_live: TimeToLive = None
    #: 5 min up to TimeSpan.MaxValue.
    auto_delete_on_idle: AutoDeleteOnIdle = None
    dead_lettering_on_message_expiration: bool | None = None
    #: A queue or topic of the primary; no cycles (through a topic's subscriptions included).
    forward_to: str | None = None


class SubscriptionConfig(_EntityOptions):
    name: SubscriptionName
    requires_session: bool = False


class _PrimaryEntity(_Model):
    name: EntityName
    max_size_in_megabytes: int = contract.DEFAULT_ENTITY_SIZE_MB
    enable_partitioning: bool = True
    #: Paired senders write here; a repeated syphon move must then be dropped as a duplicate, so a
    #: paired entity needs duplicate detection with a window >= maxOutage. false: exempt.
    paired: bool = True
    requires_duplicate_detection: bool | None = None
    #: 20 s to 7 days; a paired entity's defaults to the stack's maxOutage.
    duplicate_detection_history_time_window: DuplicateDetectionWindow = None
    default_message_time_to_live: TimeToLive = None
    auto_delete_on_idle: AutoDeleteOnIdle = None

    @property
    def duplicate_detection(self) -> bool:
        """On unless said otherwise for entities paired senders write to."""
        if self.requires_duplicate_detection is None:
            return self.paired
        return self.requires_duplicate_detection


class QueueConfig(_PrimaryEntity):
    requires_session: bool = False
    lock_duration: LockDuration = None
    max_delivery_count: DeliveryCount = None
    dead_lettering_on_message_expiration: bool | None = None
    forward_to: str | None = None


class TopicConfig(_PrimaryEntity):
    subscriptions: list[SubscriptionConfig] = Field(default_factory=list)


class RegistryConfig(_Model):
    server: Annotated[str, Field(min_length=1)]
    #: ARM id of the container registry; the syphon identity gets AcrPull on it.
    resource_id: Annotated[
        str, Field(pattern=r"^/subscriptions/.+/providers/Microsoft\.ContainerRegistry/registries/.+$")
    ]


class SyphonConfig(_Model):
    """The syphon's Container App."""

    image: ContainerImage
    #: Container Apps consumption sizes: memory is twice the CPU in GiB.
    cpu: Annotated[Literal[limits.SYPHON_CPU_VALUES], NotBool] = 0.5  # type: ignore[valid-type]
    memory: str = "1Gi"
    min_replicas: Annotated[int, Field(ge=1, le=30)] = 1
    max_replicas: Annotated[int, Field(ge=1, le=30)] = 1
    log_retention_days: Annotated[int, Field(ge=30, le=730)] = 30
    registry: RegistryConfig | None = None
    #: Where the syphon runs; defaults to the primary namespace's region.
    location: Region | None = None


class StackConfig(_Model):
    """Everything under `pairedbus:` in a stack file (README.md, "Stack config reference")."""

    #: Protects every stateful resource and requires publicNetworkAccess Disabled.
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
    #: What runs `pulumi up` (the principal the deployer's role assignment names): ARM refuses a
    #: role assignment whose principalType does not match (UnmatchedPrincipalType). Exact case.
    deployer_principal_type: PrincipalType = "User"
    #: ISO 8601: the longest primary outage the pair must absorb (see DEFAULT_MAX_OUTAGE).
    max_outage: OutageDuration = DEFAULT_MAX_OUTAGE
    queues: list[QueueConfig] = Field(default_factory=list)
    topics: list[TopicConfig] = Field(default_factory=list)
    #: ARM tags on every resource: at most 48 (50 less this project's two), names <= 512, values <= 256.
    tags: dict[str, str] = Field(default_factory=dict)
    syphon: SyphonConfig

    @property
    def backlog_queue_names(self) -> list[str]:
        return contract.backlog_queue_names(self.primary.name, self.backlog_queue_count)


# --- Loading --------------------------------------------------------------------------------


def _loc(loc: tuple[Any, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class a key path (without its last part) points into, for did-you-mean hints."""
    model: Any = StackConfig
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) or next((f for f in model.model_fields.values() if f.alias == part), None)
        if field is None:
            return None
        model = _inner_model(field.annotation)
        if model is None:
            return None
    return model


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _unknown_key(loc: tuple[Any, ...]) -> str:
    model = _model_at(loc[:-1])
    known = [f.alias or name for name, f in model.model_fields.items()] if model else []
    hint = did_you_mean(str(loc[-1]), known)
    if hint and len(loc) == 1:
        hint = hint.replace("did you mean ", f"did you mean {CONFIG_NAMESPACE}:")
    return "unknown key" + (hint or " (check its spelling against the config reference in README.md)")


def _describe(error: Mapping[str, Any]) -> str:
    if error["type"] == "missing":
        return "expected a value, none given"
    if error["type"] == "extra_forbidden":
        return _unknown_key(tuple(error["loc"]))
    message = str(error["msg"]).removeprefix("Value error, ")
    if message.startswith("expected"):
        return message
    message = message.removeprefix("Input should be ").removeprefix("Input should ")
    shown = repr(error.get("input"))
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return f"expected {message[0].lower()}{message[1:]}, got {shown}{_literal_hint(error)}"


def _literal_hint(error: Mapping[str, Any]) -> str:
    """`serviceprincipal` -> ` (did you mean 'ServicePrincipal'? the case matters)`."""
    value = error.get("input")
    if error["type"] != "literal_error" or not isinstance(value, str):
        return ""
    choices = [
        c.strip().strip("'") for c in str(error.get("ctx", {}).get("expected", "")).replace(" or ", ",").split(",")
    ]
    same_but_case = [c for c in choices if c.lower() == value.strip().lower()]
    return f" (did you mean {same_but_case[0]!r}? the case matters)" if same_but_case else ""


def _qualified(problem: str) -> str:
    return f"{CONFIG_NAMESPACE}:{problem}"


class _Invalid:
    """Stands for a value that failed validation: a cross-field rule that touches it (compares,
    tests, reads it) stops, so no rule reports a consequence of a value already reported."""

    def _stop(self, *args: Any, **kwargs: Any) -> Any:
        raise _InvalidInput

    __bool__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __hash__ = _stop
    __mod__ = __rmod__ = __mul__ = __rmul__ = __len__ = __iter__ = __contains__ = __getattr__ = _stop
    __format__ = __str__ = __repr__ = __index__ = __int__ = __float__ = _stop


class _InvalidInput(Exception):
    pass


def _mark_invalid(data: Any, loc: tuple[Any, ...], unknown_key: bool) -> None:
    """Replace the value at `loc` (or the deepest part of it that exists) with _Invalid, or drop an
    unknown key."""
    node = data
    for depth, part in enumerate(loc):
        last = depth == len(loc) - 1
        present = (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        )
        if last or not present or not isinstance(node[part], (dict, list)):
            if isinstance(node, dict) and unknown_key and last:
                node.pop(part, None)
            elif isinstance(node, dict) and isinstance(part, str):
                node[part] = _Invalid()
            elif present:
                node[part] = _Invalid()
            return
        node = node[part]


def _constructed(model: type[BaseModel], data: Any) -> Any:
    """The model built from raw values without validating them, so that cross-field rules can look
    at the parts of a config that are fine."""
    if not isinstance(data, Mapping):
        return data
    values: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        key = field.alias if field.alias in data else name
        if key not in data:
            values[name] = _Invalid() if field.is_required() else field.get_default(call_default_factory=True)
            continue
        raw, inner = data[key], _inner_model(field.annotation)
        if inner is not None and isinstance(raw, list):
            values[name] = [_constructed(inner, item) for item in raw]
        else:
            values[name] = _constructed(inner, raw) if inner is not None else raw
    return model.model_construct(**values)


def _cross_field_problems_despite(values: Mapping[str, Any], errors: list[Any]) -> list[str]:
    """The cross-field problems of a config whose fields are not all valid, so that every problem
    shows in one pass: each rule runs on the values as given, with every invalid one replaced by
    a marker; a rule that touches a marker is skipped (its input is reported already)."""
    from pairedbus.iac.config.cross_field import CROSS_FIELD_RULES

    data = copy.deepcopy(dict(values))
    for error in errors:
        _mark_invalid(data, tuple(error["loc"]), error["type"] == "extra_forbidden")
    config = _constructed(StackConfig, data)
    problems: list[str] = []
    for rule in CROSS_FIELD_RULES:
        try:
            problems += list(rule(config))
        except Exception:  # a value it needs is invalid (or missing), and reported already
            continue
    return problems


def _with_outage_windows(config: StackConfig) -> StackConfig:
    """Paired entities with duplicate detection and no window of their own get maxOutage (the
    service default, 10 minutes, would be shorter than the outage the pair must absorb)."""

    def fill(entity: Any) -> Any:
        if entity.duplicate_detection and entity.duplicate_detection_history_time_window is None:
            return entity.model_copy(update={"duplicate_detection_history_time_window": config.max_outage})
        return entity

    return config.model_copy(
        update={"queues": [fill(q) for q in config.queues], "topics": [fill(t) for t in config.topics]}
    )


def parse_stack_config(values: Mapping[str, Any]) -> StackConfig:
    """Validate the `pairedbus:` config (keys without the namespace prefix).

    Raises StackConfigError listing every problem, each as `pairedbus:<path>: expected ...`,
    together with any problems `values` carries from reading the stack file and its keys.
    """
    carried = key_problems_of(values)
    try:
        config = StackConfig.model_validate(dict(values))
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        problems = [_qualified(f"{_loc(e['loc'])}: {_describe(e)}") for e in errors]
        others = _cross_field_problems_despite(values, errors)
        raise StackConfigError([*carried, *problems, *(_qualified(p) for p in others)]) from None
    problems = [_qualified(p) for p in cross_field_problems(config)]
    if carried or problems:
        raise StackConfigError([*carried, *problems])
    return _with_outage_windows(config)


def load_pulumi_stack_config() -> StackConfig:
    """The running Pulumi program's validated config; a bad one ends the program with one line
    per problem and no traceback (pulumi.RunError), before any resource is registered."""
    import pulumi
    from pulumi.runtime import config as runtime_config

    settings = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    try:
        return parse_stack_config(config_from_pulumi_settings(settings))
    except StackConfigError as exc:
        raise pulumi.RunError("invalid stack config:\n" + "\n".join(exc.shown)) from None
