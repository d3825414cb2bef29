"""A plan as a tree, the way `pulumi preview` shows one: stack -> components -> resources.

Each resource shows its operation against a baseline (when there is one), its type, the name
Azure shows, and a few key settings, folded so that a line fits a terminal.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from rich.text import Text
from rich.tree import Tree

from pairedbus.plans.diff import PropertyChange
from pairedbus.plans.model import Plan, PlannedResource

#: The settings a reviewer looks at first, in the order they are shown; at most MAX_SETTINGS.
_KEY_SETTINGS = (
    "sku",
    "location",
    "enablePartitioning",
    "maxSizeInMegabytes",
    "requiresSession",
    "requiresDuplicateDetection",
    "premiumMessagingPartitions",
    "publicNetworkAccess",
    "disableLocalAuth",
    "minimumTlsVersion",
    "lockDuration",
    "forwardTo",
    "principalType",
)
MAX_SETTINGS = 4
MAX_VALUE_CHARS = 24

#: Operation -> (mark, style), as `pulumi preview` marks them.
OPERATIONS: Mapping[str, tuple[str, str]] = {
    "create": ("+", "green"),
    "update": ("~", "yellow"),
    "replace": ("+-", "magenta"),
    "delete": ("-", "red"),
    "discard": ("<", "red"),  # a read resource leaving the program: forgotten, not deleted (`read-discard`)
    "same": (" ", "dim"),
}

#: The input that holds the name Azure shows, by the last segment of the resource type.
_NAME_INPUT = {
    "Queue": "queueName",
    "BacklogQueue": "queueName",
    "Topic": "topicName",
    "Subscription": "subscriptionName",
    "Namespace": "namespaceName",
    "ResourceGroup": "resourceGroupName",
}


def short_type(resource: PlannedResource) -> str:
    return resource.type.rsplit(":", 1)[-1]


def display_name(resource: PlannedResource) -> str:
    """The name as Azure shows it where the type has one, else the logical name."""
    key = _NAME_INPUT.get(short_type(resource))
    value = resource.inputs.get(key) if key else None
    return value if isinstance(value, str) else resource.name


def _short(value: object) -> str:
    if isinstance(value, dict):
        value = value.get("name", value)
    text = str(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def key_settings(resource: PlannedResource) -> str:
    inputs = resource.inputs
    parts = [f"{k}={_short(inputs[k])}" for k in _KEY_SETTINGS if inputs.get(k) is not None][:MAX_SETTINGS]
    flags = [flag for flag, on in (("protect", resource.protect), ("retain", resource.retain_on_delete)) if on]
    return " ".join(parts + flags)


def _label(resource: PlannedResource, operation: str | None) -> Text:
    label = Text()
    if operation is not None:
        mark, style = OPERATIONS[operation]
        label.append(f"{mark:2} ", style=style)
    if not resource.custom:
        label.append(f"{short_type(resource)} ", style="bold")
        label.append(resource.name)
        return label
    label.append(f"{short_type(resource)} ", style="cyan")
    label.append(display_name(resource))
    settings = key_settings(resource)
    if settings:
        label.append(f"  {settings}", style="dim")
    return label


def plan_tree(
    plan: Plan, operations: Mapping[str, str] | None = None, deleted: tuple[PlannedResource, ...] = ()
) -> Tree:
    """The stack's resources under their components; `operations` maps URN -> create, update,
    replace, delete, discard or same; `deleted` are baseline resources the plan no longer has."""
    resources = (*plan.resources, *deleted)
    known = {r.urn for r in resources}
    children: dict[str | None, list[PlannedResource]] = {}
    for resource in resources:
        parent = resource.parent if resource.parent in known else None
        children.setdefault(parent, []).append(resource)

    root = Tree(Text(f"{plan.project}-{plan.stack}", style="bold"), guide_style="dim")

    def add(node: Tree, parent: str | None) -> None:
        for resource in children.get(parent, []):
            op = operations.get(resource.urn) if operations is not None else None
            add(node.add(_label(resource, op)), resource.urn)

    add(root, None)
    return root


def summary(plan: Plan, operations: Mapping[str, str] | None = None) -> str:
    """`27 resources: 2 Namespace, 10 BacklogQueue, ...` and, with a baseline, the operations."""
    custom = [r for r in plan.resources if r.custom]
    by_type = Counter(short_type(r) for r in custom)
    text = f"{len(custom)} resources: " + ", ".join(f"{n} {t}" for t, n in sorted(by_type.items()))
    if operations:
        counts = Counter(operations.values())
        text += "; " + ", ".join(f"{counts[op]} to {op}" for op in OPERATIONS if counts.get(op))
    return text


def diff_lines(
    plan: Plan,
    operations: Mapping[str, str],
    changes: Mapping[str, tuple[PropertyChange, ...]],
    limit: int | None = None,
) -> list[str]:
    """Each updated or replaced resource, then its property changes indented below it, as `pulumi preview --diff`
    shows them: `~ tags["owner"]: "a" => "b"`, `... (forces replacement)`; secrets as `[secret]`. At most `limit`
    resources, and as many changes of each, then how many more."""
    changed = [r for r in plan.resources if operations.get(r.urn) in ("update", "replace") and changes.get(r.urn)]
    lines: list[str] = []
    for resource in changed[:limit]:
        op = operations[resource.urn]
        mark, _style = OPERATIONS[op]
        found = changes[resource.urn]
        lines.append(f"{mark} {short_type(resource)} {display_name(resource)} ({op})")
        lines.extend(f"    {change.line()}" for change in found[:limit])
        if limit is not None and len(found) > limit:
            lines.append(f"    ... and {len(found) - limit} more changes")
    if limit is not None and len(changed) > limit:
        lines.append(f"... and {len(changed) - limit} more resources with changes (every change is in --json)")
    return lines
