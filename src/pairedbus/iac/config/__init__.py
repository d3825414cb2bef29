"""The stack-config model: what `stacks/Pulumi.<stack>.yaml` may say, validated in one pass."""

from pairedbus.iac.config.model import (
    DEFAULT_MAX_OUTAGE,
    NamespaceConfig,
    QueueConfig,
    RegistryConfig,
    ResourceGroupConfig,
    ResourceGroupsConfig,
    StackConfig,
    StackConfigError,
    SubscriptionConfig,
    SyphonConfig,
    TopicConfig,
    config_from_pulumi_settings,
    cross_field_problems,
    decode_config_value,
    load_pulumi_stack_config,
    parse_stack_config,
)

__all__ = [
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
