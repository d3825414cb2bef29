"""Microsoft's Service Bus emulator `Config.json`, read as is, so a user switching keeps their file.

Shape (github.com/Azure/azure-service-bus-emulator-installer, `Config.json`):
`UserConfig.Namespaces[]` each with `Name`, `Queues[]` and `Topics[]` (`Name`, `Properties`), topics
with `Subscriptions[]` (`Name`, `Properties`, `Rules[]`). Property names are the service's
(`MaxDeliveryCount`, `LockDuration`, `RequiresSession`, `ForwardTo`, ...); every one is checked
against the model's and an unknown one is refused by its path, before anything is served.
Unlike Microsoft's emulator (one namespace, `sbemulatorns`), any number of namespaces is served.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pairedbus.errors import UserError
from pairedbus.servicebus.filters import DEFAULT_RULE_NAME, CorrelationFilter, Rule, RuleFilter, SqlAction, SqlFilter
from pairedbus.servicebus.properties import DEFAULTS, EntityType
from pairedbus.servicebus.world import ServiceBusWorld

__all__ = ["EmulatorConfig", "NamespaceConfig", "apply_config", "load_config"]

#: Larger than any real Config.json by far; a bigger file is refused before it is read.
MAX_CONFIG_BYTES = 16 * 1024 * 1024


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class RuleConfig(_Model):
    name: str = Field(alias="Name", min_length=1)
    properties: dict[str, Any] = Field(default_factory=dict, alias="Properties")


class SubscriptionConfig(_Model):
    name: str = Field(alias="Name", min_length=1)
    properties: dict[str, Any] = Field(default_factory=dict, alias="Properties")
    rules: list[RuleConfig] = Field(default_factory=list, alias="Rules")


class QueueConfig(_Model):
    name: str = Field(alias="Name", min_length=1)
    properties: dict[str, Any] = Field(default_factory=dict, alias="Properties")


class TopicConfig(_Model):
    name: str = Field(alias="Name", min_length=1)
    properties: dict[str, Any] = Field(default_factory=dict, alias="Properties")
    subscriptions: list[SubscriptionConfig] = Field(default_factory=list, alias="Subscriptions")


class NamespaceConfig(_Model):
    name: str = Field(alias="Name", min_length=1)
    queues: list[QueueConfig] = Field(default_factory=list, alias="Queues")
    topics: list[TopicConfig] = Field(default_factory=list, alias="Topics")


class UserConfig(_Model):
    namespaces: list[NamespaceConfig] = Field(alias="Namespaces", min_length=1)
    logging: dict[str, Any] | None = Field(default=None, alias="Logging")


class EmulatorConfig(_Model):
    user_config: UserConfig = Field(alias="UserConfig")


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _properties(kind: EntityType, where: str, properties: dict[str, Any]) -> dict[str, Any]:
    known = DEFAULTS[kind]
    out = {}
    for key, value in properties.items():
        name = _snake(key)
        if name not in known:
            raise UserError(f"--config: {where}.Properties.{key}: not a {kind.value} property the emulator knows")
        out[name] = value if value != "" else None
    return out


def load_config(path: Path) -> EmulatorConfig:
    """The file, checked whole; a UserError naming the first bad field otherwise."""
    try:
        if not path.is_file():
            raise UserError(f"--config: {path} is not a regular file")
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise UserError(f"--config: {path} is larger than {MAX_CONFIG_BYTES} bytes")
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"--config: {path}: not a JSON file ({exc})") from None
    try:
        config = EmulatorConfig.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise UserError(f"--config: {where}: {error['msg']}") from None
    names = [ns.name for ns in config.user_config.namespaces]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UserError(f"--config: UserConfig.Namespaces: {duplicates[0]!r} is declared twice")
    return config


#: Config.json's correlation filter keys (snake-cased) whose model name differs: Label is the subject.
_CORRELATION_NAMES = {"label": "subject"}


def apply_config(world: ServiceBusWorld, fqdns: dict[str, str], config: EmulatorConfig) -> None:
    """Create every entity of the file in the world (namespace name -> fqdn in `fqdns`)."""
    for i, ns_config in enumerate(config.user_config.namespaces):
        ns = world.namespace(fqdns[ns_config.name])
        where = f"UserConfig.Namespaces[{i}]"
        try:
            for j, queue in enumerate(ns_config.queues):
                ns.create_queue(queue.name, **_properties(EntityType.QUEUE, f"{where}.Queues[{j}]", queue.properties))
            for j, topic in enumerate(ns_config.topics):
                twhere = f"{where}.Topics[{j}]"
                ns.create_topic(topic.name, **_properties(EntityType.TOPIC, twhere, topic.properties))
                for k, sub in enumerate(topic.subscriptions):
                    swhere = f"{twhere}.Subscriptions[{k}]"
                    created = ns.create_subscription(
                        topic.name, sub.name, **_properties(EntityType.SUBSCRIPTION, swhere, sub.properties)
                    )
                    if sub.rules:  # declared rules replace the default true filter
                        created.rules.remove(DEFAULT_RULE_NAME)
                    for rule in sub.rules:
                        props = rule.properties
                        kind = str(props.get("FilterType", "Sql")).lower()
                        if kind == "correlation":
                            raw = dict(props.get("CorrelationFilter") or {})
                            app = raw.pop("Properties", None)
                            fields = {_CORRELATION_NAMES.get(_snake(k), _snake(k)): v for k, v in raw.items()}
                            rule_filter: RuleFilter = CorrelationFilter(**fields, properties=app)
                        else:
                            rule_filter = SqlFilter(str((props.get("SqlFilter") or {}).get("SqlExpression", "1=1")))
                        action_expr = (props.get("Action") or {}).get("SqlExpression")
                        action = SqlAction(action_expr) if action_expr else None
                        created.rules.add(Rule(rule.name, rule_filter, action))
        except UserError:
            raise
        except Exception as exc:
            raise UserError(f"--config: {where} ({ns_config.name}): {getattr(exc, 'message', exc)}") from None
