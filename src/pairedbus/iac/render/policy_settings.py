"""What the policy pack needs to know from the stack config, as policy settings.

CrossGuard policies see resource inputs and their own policy config, never the stack config
(`StackValidationArgs` carries resources, stack tags and policy config only). The facts below are
not in any resource input, so `pairedbus plan` passes them to the pack as the policies' settings
(the shape of `--policy-pack-config`), and `pairedbus plan --write-policy-config FILE` writes them
for `pulumi preview --policy-pack policies --policy-pack-config FILE`:

- `backlog-queue-set.backlogQueueCount`: queues beyond it are allowed extras, a gap below it fails;
- `paired-entities-duplicate-detection.maxOutage` and `.unpaired`: the window a paired entity's
  duplicate detection needs, and the entities opted out of pairing (`paired: false`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pairedbus import contract
from pairedbus.iac.config import StackConfig
from pairedbus.rules import BACKLOG_QUEUE_SET, PAIRED_ENTITIES_DUPLICATE_DETECTION


def stack_policy_settings(config: StackConfig) -> dict[str, dict[str, Any]]:
    """Per-policy settings derived from a validated stack config."""
    unpaired = [e.name for e in (*config.queues, *config.topics) if not getattr(e, "paired", True)]
    return {
        BACKLOG_QUEUE_SET: {contract.BACKLOG_QUEUE_COUNT_KEY: config.backlog_queue_count},
        PAIRED_ENTITIES_DUPLICATE_DETECTION: {
            "maxOutage": str(getattr(config, "max_outage", None) or contract.DEFAULT_MAX_OUTAGE),
            "unpaired": sorted(unpaired, key=str.lower),
        },
    }


def merge_policy_config(derived: Mapping[str, Mapping[str, Any]], user: Mapping[str, Any] | None) -> dict[str, Any]:
    """The user's `--policy-config` over the derived settings: a level given as a bare string is
    kept as `enforcementLevel`; a key the user sets wins over the derived one."""
    merged: dict[str, Any] = dict(user or {})
    for policy, settings in derived.items():
        entry = merged.get(policy)
        if entry is None:
            merged[policy] = dict(settings)
        elif isinstance(entry, Mapping):
            merged[policy] = {**settings, **entry}
        else:
            merged[policy] = {**settings, "enforcementLevel": entry}
    return merged
