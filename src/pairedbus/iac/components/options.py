"""Resource options the components hand to their children, and the aliases that keep existing stacks.

What a child inherits from its component, and who does it (checked against Pulumi 3.272):
- `protect` and `provider(s)`: the Python SDK (`pulumi.Resource.__init__`: a child without `protect` takes its
  parent's; providers are looked up through the parent). So a component never passes `protect=False`: an explicit
  value beats inheritance, and the caller's `protect=True` would no longer reach the child.
- `retain_on_delete` and `deleted_with`: the engine (`inheritFromParent` in pkg/resource/deploy/source_eval.go),
  not the SDK. The components also forward them explicitly, so that a program run by an older engine, or under
  Pulumi's mock runtime (which has no engine), sees the same.
- `custom_timeouts`: Pulumi does not inherit them. A user who sets them on a pair means its slow operations
  (a Premium namespace takes up to half an hour to create), so the components forward them to every child.
- `ignore_changes`: Pulumi does not inherit it, and neither do the components: its property paths mean something
  for one resource type only. Ignore a property of every child with a transform on the component
  (`ResourceOptions(transforms=[...])`), which Pulumi applies to the whole subtree.
- `production` (an input, not an option) only ever adds `protect=True`; it never lowers what the caller asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi

from pairedbus import contract


@dataclass(frozen=True)
class Inherited:
    """The options of a component that its children get from it explicitly (see the module docstring)."""

    retain_on_delete: bool | None = None
    deleted_with: pulumi.Resource | None = None
    custom_timeouts: pulumi.CustomTimeouts | None = None

    @classmethod
    def of(cls, opts: pulumi.ResourceOptions | None) -> Inherited:
        if opts is None:
            return cls()
        return cls(opts.retain_on_delete, opts.deleted_with, opts.custom_timeouts)

    def child(
        self,
        parent: pulumi.Resource,
        *,
        protect: bool = False,
        retain_on_delete: bool = False,
        depends_on: Sequence[pulumi.Resource] | None = None,
        aliases: Sequence[pulumi.Alias] | None = None,
    ) -> pulumi.ResourceOptions:
        """Options of one child: parented, with what it inherits; `protect`/`retain_on_delete` only ever add."""
        return pulumi.ResourceOptions(
            parent=parent,
            protect=True if protect else None,
            retain_on_delete=True if retain_on_delete or self.retain_on_delete else None,
            deleted_with=self.deleted_with,
            custom_timeouts=self.custom_timeouts,
            depends_on=list(depends_on) if depends_on else None,
            aliases=list(aliases) if aliases else None,
        )

    def part(self, parent: pulumi.Resource, aliases: Sequence[pulumi.Alias] = ()) -> pulumi.ResourceOptions:
        """Options of a part inside PairedNamespace: the same hand-down, so its own children get it too."""
        return pulumi.ResourceOptions(
            parent=parent,
            retain_on_delete=self.retain_on_delete,
            deleted_with=self.deleted_with,
            custom_timeouts=self.custom_timeouts,
            aliases=list(aliases) or None,
        )


def with_part_token(token: str, opts: pulumi.ResourceOptions | None) -> pulumi.ResourceOptions:
    """A part's options plus the alias to its token before pairedbus 0.2 (same name, same parent), so an
    existing stack's part and, through it, its children keep their URNs. Safe with any number of parts: the
    alias names this part's own old URN."""
    legacy = pulumi.Alias(type_=contract.LEGACY_PART_TYPES[token])
    return pulumi.ResourceOptions.merge(opts or pulumi.ResourceOptions(), pulumi.ResourceOptions(aliases=[legacy]))


def renamed_from(old_name: str, legacy_urns: bool) -> list[pulumi.Alias]:
    """The alias of a child whose name now starts with its component's name (it was `old_name`, fixed, before
    pairedbus 0.2), only for the one part built with `legacy_urns`. A URN holds the parent's *type* chain, not its
    name: `Alias(name="primary")` under any pair's NamespacePair is the same URN, and combined with the part's
    token alias it is the old URN of the 0.1 pair. On every pair it would let a second pair claim the first one's
    resources (the engine refuses two claims: "Duplicate resource alias", or hands the resource to whichever
    registers first)."""
    return [pulumi.Alias(name=old_name)] if legacy_urns else []
