"""What a rule reports: one `Finding` per property (or resource) off the rules."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Final

MANDATORY: Final = "mandatory"
ADVISORY: Final = "advisory"

# Rule names: the policy pack registers policies under the same names.
PREMIUM_ENTITIES_PARTITIONED: Final = "premium-entities-partitioned"
BACKLOG_QUEUE_SETTINGS: Final = "backlog-queue-settings"
#: The stack half of the backlog rules: indices 0..N-1, all in the secondary, primary's prefix.
BACKLOG_QUEUE_SET: Final = "backlog-queue-set"
LOCAL_AUTH_DISABLED: Final = "local-auth-disabled"
MINIMUM_TLS: Final = "minimum-tls-1-2"
PAIRED_REGIONS_DIFFER: Final = "paired-regions-differ"
STANDARD_PARTITIONED_ENTITY_LIMIT: Final = "standard-partitioned-entity-limit"
ENTITY_SIZE_ALLOWED_FOR_TIER: Final = "entity-size-allowed-for-tier"
PAIRED_ENTITIES_DUPLICATE_DETECTION: Final = "paired-entities-duplicate-detection"
#: Advisory: a production (protected) namespace without diagnostic settings (rules/hardening.py).
PRODUCTION_NAMESPACE_DIAGNOSTICS: Final = "production-namespace-diagnostics"

RULES: Final = (
    PREMIUM_ENTITIES_PARTITIONED,
    BACKLOG_QUEUE_SETTINGS,
    BACKLOG_QUEUE_SET,
    LOCAL_AUTH_DISABLED,
    MINIMUM_TLS,
    PAIRED_REGIONS_DIFFER,
    STANDARD_PARTITIONED_ENTITY_LIMIT,
    ENTITY_SIZE_ALLOWED_FOR_TIER,
    PAIRED_ENTITIES_DUPLICATE_DETECTION,
    PRODUCTION_NAMESPACE_DIAGNOSTICS,
)


@dataclass(frozen=True)
class Finding:
    rule: str
    #: Entity name as the service shows it (backlog queues with their '/'), or the namespace name.
    entity: str
    namespace: str | None
    #: ARM camelCase property; None for whole-resource findings.
    property: str | None
    expected: object
    actual: object
    severity: str
    message: str

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["expected"] = _jsonable(self.expected)
        data["actual"] = _jsonable(self.actual)
        return data


def _jsonable(value: object) -> object:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return str(value)
