"""Reading a stack file the way the Pulumi CLI does: hostile files end in one line naming the
file, key problems join the config's own in one pass, and go-yaml's scalar rules apply."""

from __future__ import annotations

import copy

import pytest

from pairedbus.cli import main
from pairedbus.errors import UserError
from pairedbus.iac.config import StackConfigError, config_from_pulumi_settings
from pairedbus.iac.config.problems import MAX_REPORTED_PROBLEMS
from pairedbus.iac.config.stack_file import MAX_EXPANDED_VALUES
from tests.iac.config.conftest import read_stack

ALIAS_BOMB = """config:
  pairedbus:tags:
    a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]
    b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
    c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
    d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
    e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
    f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
    g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
    h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]
    i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]
"""


def test_an_alias_bomb_is_one_line_before_anything_expands(write_stack, capsys):
    project = write_stack(ALIAS_BOMB)
    with pytest.raises(UserError) as info:
        project.stack_settings("case")
    assert str(info.value).startswith("Pulumi.case.yaml line ")
    assert f"more than {MAX_EXPANDED_VALUES} values" in str(info.value)
    assert main(["plan", "case", "--project-dir", str(project.directory)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 300


def test_an_alias_to_itself_is_one_line(write_stack):
    project = write_stack("config:\n  pairedbus:tags: &t\n    self: *t\n")
    with pytest.raises(UserError, match="an alias refers to the value it is part of"):
        project.stack_settings("case")


def test_aliases_within_the_bound_expand(write_stack, dev_document):
    # The anchor sits on a config value: a top-level holder key (`base: &rg ...`) is not a stack file key.
    text = __import__("yaml").safe_dump(dev_document, sort_keys=False)
    text = text.replace(
        "    primary:\n      name: rg-pairedbus-dev-weu\n", "    primary:\n      name: &rg rg-shared-weu\n"
    )
    text = text.replace("    owner: platform-messaging\n", "    owner: *rg\n")
    config = read_stack(write_stack(text))
    assert config.resource_groups.primary.name == "rg-shared-weu" and config.tags["owner"] == "rg-shared-weu"


def test_a_non_utf8_stack_file_is_one_line_naming_it(write_stack, capsys):
    project = write_stack("config:\n  pairedbus:tags:\n    owner: caf\xe9\n".encode("latin-1"))
    assert main(["plan", "case", "--project-dir", str(project.directory)]) == 2
    err = capsys.readouterr().err
    assert err == "pairedbus: error: Pulumi.case.yaml line 3: not UTF-8 text (byte 0xe9); save the file as UTF-8\n"


def test_a_stack_file_of_a_scalar_is_one_line(write_stack):
    with pytest.raises(UserError, match="expected a YAML mapping at the top level"):
        write_stack("just text\n").stack_settings("case")


def test_yaml_dates_stay_the_strings_pulumi_reads(write_stack, dev_document):
    # go-yaml v3 keeps timestamp-like scalars as strings when decoding into interface{}: a tag
    # written as a date is the string it looks like, not a crash and not a datetime.
    text = (
        __import__("yaml")
        .safe_dump(dev_document, sort_keys=False)
        .replace("    owner: platform-messaging\n", "    owner: platform-messaging\n    created: 2024-01-01\n")
    )
    assert read_stack(write_stack(text)).tags["created"] == "2024-01-01"


def test_a_bare_key_does_not_override_the_namespaced_one(write_stack, dev_document):
    document = copy.deepcopy(dev_document)
    document["config"]["backlogQueueCount"] = 20
    settings, _ = write_stack(document).stack_settings("case")
    values = config_from_pulumi_settings(settings)
    assert values["backlogQueueCount"] == 10
    assert "backlogQueueCount" not in settings and "pairedbus:backlogQueueCount" in settings


def test_other_namespaces_pass_as_pulumi_lets_them(write_stack, dev_document):
    document = copy.deepcopy(dev_document)
    document["config"]["azure-native:subscriptionId"] = "00000000-0000-0000-0000-000000000000"
    document["config"]["aws:region"] = "eu-west-1"
    assert read_stack(write_stack(document)).backlog_queue_count == 10


def test_every_problem_of_a_stack_is_reported_in_one_pass(write_stack, dev_document, capsys):
    """A duplicate YAML key, a bare key, a misspelt namespace, an unknown key, a bad field and a
    cross-field rule: all six at once, so nothing appears only after the first batch is fixed."""
    import yaml

    document = copy.deepcopy(dev_document)
    document["config"]["backlogCount"] = 3
    document["config"]["pairedBus:production"] = True
    document["config"]["pairedbus:syphon"]["imag"] = "x"
    document["config"]["pairedbus:queues"][0]["lockDuration"] = "PT10M"
    document["config"]["pairedbus:secondary"]["location"] = "westeurope"
    text = yaml.safe_dump(document, sort_keys=False).replace(
        "config:\n", "config:\n  pairedbus:backlogQueueCount: 4\n", 1
    )
    project = write_stack(text)
    assert main(["plan", "case", "--project-dir", str(project.directory)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 6, lines
    for fragment in (
        "pairedbus:backlogQueueCount: duplicate key",
        "backlogCount: could not parse",
        "pairedBus:production: namespace",
        "pairedbus:syphon.imag: unknown key",
        "pairedbus:queues[0].lockDuration: expected a duration from PT5S to PT5M",
        "pairedbus:secondary.location: expected a region other than the primary's",
    ):
        assert any(fragment in line for line in lines), (fragment, lines)


def test_errors_are_capped_with_a_count_of_the_rest(write_stack, dev_document):
    document = copy.deepcopy(dev_document)
    document["config"]["pairedbus:queues"] = [{"name": f"q{i}", "lockDuration": "PT1H"} for i in range(99)]
    project = write_stack(document)
    with pytest.raises(StackConfigError) as info:
        read_stack(project)
    assert len(info.value.problems) == 99
    assert len(info.value.shown) == MAX_REPORTED_PROBLEMS + 1
    assert info.value.shown[-1] == f"... and {99 - MAX_REPORTED_PROBLEMS} more"
    assert str(info.value).splitlines() == info.value.shown


@pytest.mark.parametrize("depth", [40, 5000])
def test_deeply_nested_values_are_one_line(write_stack, depth):
    project = write_stack("config:\n  pairedbus:tags: " + "[" * depth + "]" * depth + "\n")
    with pytest.raises(UserError, match="nested more than 32 deep"):
        project.stack_settings("case")


@pytest.mark.parametrize(
    ("value", "words"),
    [("!!binary aGVsbG8=", "expected plain YAML values, got a bytes"), ("!!python/name:os.system", "not valid YAML")],
)
def test_yaml_types_pulumi_cannot_pass_on_are_refused(write_stack, dev_document, value, words):
    import yaml

    text = yaml.safe_dump(dev_document, sort_keys=False) + f"  pairedbus:extra: {value}\n"
    with pytest.raises((UserError, StackConfigError), match=words):
        read_stack(write_stack(text))
