"""The stack config model: what `stacks/Pulumi.<stack>.yaml` may say under the `pairedbus:` key.

Validation happens in two passes so that every problem is reported at once, each on one line
naming its key path: pydantic checks the shape and each field on its own (`fields.py`: strict
types, the service's ranges and name rules), then `cross_field_problems` applies the rules that
need several fields (`cross_field.py`, `forwarding.py`). Problems found while reading the stack
file or its keys (`stack_file.py`, `keys.py`) join the same list. Nothing is registered with
Pulumi until all pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from pairedbus import contract
from pairedbus.iac.config.config_warnings import config_warnings, log_in_program
from pairedbus.iac.config.cross_field import CROSS_FIELD_RULES, cross_field_problems
from pairedbus.iac.config.keys import (
    CONFIG_NAMESPACE,
    config_from_pulumi_settings,
    decode_config_value,
    key_problems_of,
)
from pairedbus.iac.config.messages import config_problem, loc_path
from pairedbus.iac.config.partial import cross_field_problems_despite
from pairedbus.iac.config.problems import StackConfigError
from pairedbus.iac.config.schema import (
    NamespaceConfig,
    NetworkConfig,
    QueueConfig,
    RegistryConfig,
    ResourceGroupConfig,
    ResourceGroupsConfig,
    StackConfig,
    SubscriptionConfig,
    SyphonConfig,
    TopicConfig,
)

__all__ = [
    "CONFIG_NAMESPACE",
    "NamespaceConfig",
    "NetworkConfig",
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
    "config_warnings",
    "cross_field_problems",
    "decode_config_value",
    "load_pulumi_stack_config",
    "parse_stack_config",
]

# --- Loading --------------------------------------------------------------------------------


def _qualified(problem: str) -> str:
    return f"{CONFIG_NAMESPACE}:{problem}"


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


#: How a namespace's messaging partitions may be spelled under `pairedbus:` (the model takes both).
_PARTITIONS_KEYS = ("premiumMessagingPartitions", "premium_messaging_partitions")


def with_tier_defaults(values: Mapping[str, Any]) -> dict[str, Any]:
    """The `pairedbus:` values with the defaults that depend on a namespace's tier filled in.

    A Premium namespace that holds queues or topics must be partitioned (partitioning.md: "in Premium every queue
    and topic is partitioned"), which Azure allows only with premiumMessagingPartitions 2 or 4, set at creation
    (`Microsoft.ServiceBus` SBNamespaceProperties: "The default value is 1 and possible values are 1, 2 and 4";
    learn.microsoft.com, "Enable partitioning in Azure Service Bus Premium": non-partitioned entities are not
    allowed in a partitioned namespace). The service's own default, 1, is a non-partitioned namespace, so a
    Premium pair failed on a value nobody wrote. Such a namespace now gets 2 unless the config says otherwise:
    the secondary always (it holds the backlog queues), the primary when the pair has queues or topics. A
    Premium primary without them keeps the service's default: it was valid, and the count cannot change on an
    existing namespace (a new value would replace it). Anything not shaped as expected is left for the model
    to report."""
    filled = dict(values)
    holds_entities = {
        "secondary": True,
        "primary": any(isinstance(filled.get(k), list) and filled[k] for k in ("queues", "topics")),
    }
    for role, holds in holds_entities.items():
        namespace = filled.get(role)
        if (
            holds
            and isinstance(namespace, Mapping)
            and namespace.get("sku") == contract.SKU_PREMIUM
            and not any(k in namespace for k in _PARTITIONS_KEYS)
        ):
            filled[role] = {**namespace, _PARTITIONS_KEYS[0]: contract.MIN_PREMIUM_PARTITIONS_FOR_ENTITIES}
    return filled


def parse_stack_config(values: Mapping[str, Any]) -> StackConfig:
    """Validate the `pairedbus:` config (keys without the namespace prefix).

    Raises StackConfigError listing every problem, each as `pairedbus:<path>: expected ...`,
    together with any problems `values` carries from reading the stack file and its keys. A valid
    config's warnings (`config_warnings`) are logged when a Pulumi program is running.
    """
    carried = key_problems_of(values)
    values = with_tier_defaults(values)
    try:
        config = StackConfig.model_validate(values)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        problems = [_qualified(f"{loc_path(e['loc'])}: {config_problem(e, StackConfig)}") for e in errors]
        others = cross_field_problems_despite(StackConfig, values, errors, CROSS_FIELD_RULES)
        raise StackConfigError([*carried, *problems, *(_qualified(p) for p in others)]) from None
    problems = [_qualified(p) for p in cross_field_problems(config)]
    if carried or problems:
        raise StackConfigError([*carried, *problems])
    log_in_program(config_warnings(config))  # inside a Pulumi program: the CLI's warning channel
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
