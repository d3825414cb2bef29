"""What a component hands its children explicitly (retain_on_delete, deleted_with, custom_timeouts), that protect
and retain_on_delete only ever add, and the aliases that keep a stack made before pairedbus 0.2."""

from __future__ import annotations

from unittest.mock import Mock

import pulumi

from pairedbus.iac.components.options import Inherited, renamed_from, with_part_token

PARENT = object()  # ResourceOptions keeps the parent as given; nothing here registers a resource


def test_no_options_inherit_nothing() -> None:
    assert Inherited.of(None) == Inherited()
    options = Inherited().child(PARENT)  # type: ignore[arg-type]
    assert options.parent is PARENT
    assert (options.protect, options.retain_on_delete, options.deleted_with, options.custom_timeouts) == (
        None,
        None,
        None,
        None,
    )
    assert options.depends_on is None and options.aliases is None


def test_a_child_gets_retain_deleted_with_and_timeouts_of_its_component() -> None:
    timeouts = pulumi.CustomTimeouts(create="30m")
    keeper = object()
    inherited = Inherited.of(
        pulumi.ResourceOptions(retain_on_delete=True, deleted_with=keeper, custom_timeouts=timeouts, protect=True)  # type: ignore[arg-type]
    )
    options = inherited.child(PARENT)  # type: ignore[arg-type]
    assert options.retain_on_delete is True and options.deleted_with is keeper and options.custom_timeouts is timeouts
    # protect is not handed down explicitly: the SDK inherits it from the parent, and an explicit False would
    # beat that inheritance.
    assert options.protect is None


def test_protect_and_retain_only_ever_add() -> None:
    options = Inherited(retain_on_delete=False).child(PARENT, protect=True, retain_on_delete=True)  # type: ignore[arg-type]
    assert options.protect is True and options.retain_on_delete is True
    options = Inherited().child(PARENT, protect=False, retain_on_delete=False)  # type: ignore[arg-type]
    assert options.protect is None and options.retain_on_delete is None


def test_depends_on_and_aliases_are_passed_as_lists() -> None:
    dependency, alias = Mock(spec=pulumi.Resource), pulumi.Alias(name="old")  # depends_on takes Resources only
    options = Inherited().child(PARENT, depends_on=(dependency,), aliases=(alias,))  # type: ignore[arg-type]
    assert options.depends_on == [dependency] and options.aliases == [alias]


def test_a_part_hands_down_the_same_options() -> None:
    timeouts = pulumi.CustomTimeouts(update="1h")
    options = Inherited(retain_on_delete=True, custom_timeouts=timeouts).part(PARENT)  # type: ignore[arg-type]
    assert options.parent is PARENT and options.retain_on_delete is True and options.custom_timeouts is timeouts
    assert options.aliases is None


def test_a_part_keeps_its_token_before_0_2_as_an_alias() -> None:
    options = with_part_token("pairedbus:index:NamespacePair", pulumi.ResourceOptions(protect=True))
    assert options.protect is True
    (alias,) = options.aliases
    assert alias.type_ == "pairedbus:namespaces:NamespacePair"
    assert with_part_token("pairedbus:index:BacklogQueues", None).aliases[0].type_ == "pairedbus:backlog:BacklogQueues"


def test_the_old_fixed_name_is_an_alias_only_for_the_legacy_part() -> None:
    (alias,) = renamed_from("primary", legacy_urns=True)
    assert alias.name == "primary"
    assert renamed_from("primary", legacy_urns=False) == []
