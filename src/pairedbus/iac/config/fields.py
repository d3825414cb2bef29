"""Field types of the stack config: each checks one value on its own against the service's rule
(`pairedbus.limits` cites where each rule comes from). Cross-field rules live in `cross_field.py`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field

from pairedbus import contract, durations, limits
from pairedbus.iac.config.regions import closest_region, is_region_shaped, region, retired_reason
from pairedbus.rules.namespace import normalise_region


def _not_bool(value: Any) -> Any:
    """YAML `true` is Python's 1: refuse it where a number is expected (`Literal[1, 2]` would not)."""
    if isinstance(value, bool):
        raise ValueError(f"expected a number, got {value!r}")
    return value


def _show(delta: timedelta) -> str:
    return durations.iso_duration(delta)


def duration_between(low: timedelta, high: timedelta | None) -> Callable[[str | None], str | None]:
    """An ISO 8601 duration within [low, high] (high None: up to .NET TimeSpan.MaxValue)."""
    high_ticks = durations.TIMESPAN_MAX_TICKS if high is None else durations.duration_ticks(high)
    shown_high = contract.TIMESPAN_MAX_ISO if high is None else _show(high)

    def check(value: str | None) -> str | None:
        if value is None:
            return None
        try:
            ticks = durations.duration_ticks(value)
        except ValueError:
            raise ValueError(f"expected an ISO 8601 duration such as PT1M or P14D, got {value!r}") from None
        if not durations.duration_ticks(low) <= ticks <= high_ticks:
            raise ValueError(f"expected a duration from {_show(low)} to {shown_high}, got {value!r}")
        return value

    return check


#: A number where YAML's true/false must not pass for 1/0.
NotBool = BeforeValidator(_not_bool)

LockDuration = Annotated[
    str | None, AfterValidator(duration_between(limits.MIN_LOCK_DURATION, limits.MAX_LOCK_DURATION))
]
TimeToLive = Annotated[str | None, AfterValidator(duration_between(limits.MIN_TIME_TO_LIVE, None))]
AutoDeleteOnIdle = Annotated[str | None, AfterValidator(duration_between(limits.MIN_AUTO_DELETE_ON_IDLE, None))]
DuplicateDetectionWindow = Annotated[
    str | None,
    AfterValidator(duration_between(limits.MIN_DUPLICATE_DETECTION_WINDOW, limits.MAX_DUPLICATE_DETECTION_WINDOW)),
]
#: The longest primary outage the pair must absorb: bounded like the window that must cover it.
OutageDuration = Annotated[
    str,
    AfterValidator(duration_between(limits.MIN_DUPLICATE_DETECTION_WINDOW, limits.MAX_DUPLICATE_DETECTION_WINDOW)),
]
DeliveryCount = Annotated[
    int | None, NotBool, Field(ge=limits.MIN_MAX_DELIVERY_COUNT, le=limits.MAX_MAX_DELIVERY_COUNT)
]


def _namespace_name(value: str) -> str:
    if not contract.is_namespace_name(value):
        raise ValueError(f"expected {contract.NAMESPACE_NAME_RULE}, got {value!r}")
    return value


def _entity_name(max_length: int) -> Callable[[str], str]:
    def check(value: str) -> str:
        if not (1 <= len(value) <= max_length and limits.ENTITY_NAME.match(value)):
            raise ValueError(
                f"expected 1-{max_length} letters, digits, '.', '-' or '_', starting and ending with a "
                f"letter or digit ('/' is reserved: ARM cannot create such names), got {value!r}"
            )
        return value

    return check


def _resource_group_name(value: str) -> str:
    if not (
        1 <= len(value) <= limits.RESOURCE_GROUP_NAME_MAX
        and limits.RESOURCE_GROUP_NAME.match(value)
        and not value.endswith(".")
    ):
        raise ValueError(
            f"expected 1-{limits.RESOURCE_GROUP_NAME_MAX} letters, digits, '_', '-', '.', '(' or ')', not "
            f"ending in '.' (ARM's resource group name pattern), got {value!r}"
        )
    return value


def _region(value: str) -> str:
    """An Azure region, as its canonical name (`West Europe` -> `westeurope`, as ARM reports it).

    A retired region is refused with the reason; a region-shaped name missing from the table is
    accepted (the stack config's warnings name it: `config_warnings`); anything else is refused."""
    reason = retired_reason(value)
    if reason is not None:
        raise ValueError(f"expected a current Azure region, got {value!r}: {reason}")
    if region(value) is None and not is_region_shaped(value):
        hint = closest_region(value)
        raise ValueError(
            f"expected an Azure region such as westeurope or West Europe, got {value!r}"
            + (f" (did you mean {hint}?)" if hint else "")
        )
    return normalise_region(value)


def _image(value: str) -> str:
    if not value.strip():
        raise ValueError("expected a container image reference such as ghcr.io/contoso/syphon:1.0, got a blank string")
    match = limits.IMAGE_REFERENCE.match(value) if len(value) <= limits.IMAGE_REFERENCE_MAX else None
    if match is None:
        raise ValueError(
            f"expected a container image reference such as ghcr.io/contoso/syphon:1.0 (lower-case repository, "
            f"optional :tag and @sha256:digest), got {value!r}"
        )
    name = match["name"]
    if len(name) > limits.IMAGE_NAME_MAX:
        raise ValueError(f"expected an image name of at most {limits.IMAGE_NAME_MAX} characters, got {len(name)}")
    return value


def _subnet_id(value: str) -> str:
    if not limits.SUBNET_ID.match(value):
        raise ValueError(
            "expected a subnet's ARM id, /subscriptions/<guid>/resourceGroups/<group>/providers/"
            f"Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>, got {value[:200]!r}"
        )
    return value


def _registry_id(value: str) -> str:
    """The ARM id of a container registry: the AcrPull grant's scope, so only a registry's id may pass."""
    if not limits.REGISTRY_ID.match(value):
        raise ValueError(
            "expected a container registry's ARM id, /subscriptions/<guid>/resourceGroups/<group>/providers/"
            f"Microsoft.ContainerRegistry/registries/<5-50 letters or digits>, got {value[:200]!r}"
        )
    return value


def _private_dns_zone_id(value: str) -> str:
    if not limits.PRIVATE_DNS_ZONE_ID.match(value):
        raise ValueError(
            "expected the ARM id of the private DNS zone Service Bus private endpoints use, /subscriptions/<guid>/"
            f"resourceGroups/<group>/providers/Microsoft.Network/privateDnsZones/{limits.SERVICE_BUS_PRIVATE_DNS_ZONE}"
            f", got {value[:200]!r}"
        )
    return value


NamespaceName = Annotated[str, AfterValidator(_namespace_name)]
SubnetId = Annotated[str, AfterValidator(_subnet_id)]
RegistryId = Annotated[str, AfterValidator(_registry_id)]
PrivateDnsZoneId = Annotated[str, AfterValidator(_private_dns_zone_id)]
EntityName = Annotated[str, AfterValidator(_entity_name(contract.ENTITY_NAME_MAX))]
SubscriptionName = Annotated[str, AfterValidator(_entity_name(contract.SUBSCRIPTION_NAME_MAX))]
ResourceGroupName = Annotated[str, AfterValidator(_resource_group_name)]
Region = Annotated[str, AfterValidator(_region)]
ContainerImage = Annotated[str, AfterValidator(_image)]


# --- Production hardening (limits.py, "Production hardening") -------------------------------------


def _arm_id(pattern_name: str, example: str) -> Callable[[str], str]:
    pattern = getattr(limits, pattern_name)

    def check(value: str) -> str:
        if not pattern.match(value):
            raise ValueError(f"expected {example}, got {value[:200]!r}")
        return value

    return check


def _ipv4_rule(value: str) -> str:
    """Service Bus IP filter rules are IPv4 addresses or CIDR ranges ([sb-net])."""
    import ipaddress

    try:
        ipaddress.IPv4Network(value, strict=True)
    except ValueError:
        raise ValueError(
            f"expected an IPv4 address or CIDR range such as 203.0.113.0/24 (host bits zero), got {value[:60]!r}"
        ) from None
    return value


def _log_selection(values: list[str]) -> list[str]:
    allowed = (*limits.LOG_CATEGORY_GROUPS, *limits.SERVICE_BUS_LOG_CATEGORIES)
    for value in values:
        if value not in allowed:
            raise ValueError(f"expected each of {', '.join(allowed)} (exact case), got {value[:60]!r}")
    if len(set(values)) != len(values):
        raise ValueError(f"expected each category or group once, got {values!r}")
    if not values:
        raise ValueError("expected at least one category or group (leave diagnostics out for none), got []")
    return values


def at_most(count: int, what: str) -> AfterValidator:
    """A list of at most `count` items, refused in one line that says how many were given."""

    def check(values: list[Any]) -> list[Any]:
        if len(values) > count:
            raise ValueError(f"expected at most {count} {what} (Service Bus quotas), got {len(values)}")
        return values

    return AfterValidator(check)


KeyVaultUri = Annotated[
    str, AfterValidator(_arm_id("KEY_VAULT_URI", "a key vault URI such as https://kv-contoso.vault.azure.net"))
]
KeyName = Annotated[str, AfterValidator(_arm_id("KEY_NAME", "a Key Vault key name: 1-127 letters, digits or '-'"))]
KeyVersion = Annotated[
    str | None, AfterValidator(lambda v: None if v is None else _arm_id("KEY_VERSION", "32 hexadecimal digits")(v))
]
UserAssignedIdentityId = Annotated[
    str,
    AfterValidator(
        _arm_id(
            "USER_ASSIGNED_IDENTITY_ID",
            "a user-assigned identity's ARM id, /subscriptions/<guid>/resourceGroups/<group>/providers/"
            "Microsoft.ManagedIdentity/userAssignedIdentities/<name>",
        )
    ),
]
LogAnalyticsWorkspaceId = Annotated[
    str,
    AfterValidator(
        _arm_id(
            "LOG_ANALYTICS_WORKSPACE_ID",
            "a Log Analytics workspace's ARM id, /subscriptions/<guid>/resourceGroups/<group>/providers/"
            "Microsoft.OperationalInsights/workspaces/<name>",
        )
    ),
]
IpRule = Annotated[str, AfterValidator(_ipv4_rule)]
LogSelection = Annotated[list[str], AfterValidator(_log_selection)]
#: A management lock on each namespace ("none": no lock); see StackConfig.namespace_lock.
NamespaceLock = Literal["CanNotDelete", "none"]
