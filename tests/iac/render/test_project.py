"""Finding the Pulumi project and a stack's file the way the Pulumi CLI does."""

from __future__ import annotations

from pathlib import Path

import pytest

from pairedbus.errors import UserError
from pairedbus.iac.render.project import PulumiProject


def test_the_project_is_found_from_a_folder_below_it(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: shop\nruntime: python\n")
    below = tmp_path / "src" / "deep"
    below.mkdir(parents=True)
    project = PulumiProject.find(below)
    assert project == PulumiProject(tmp_path.resolve(), "shop", tmp_path.resolve() / ".")


def test_stack_config_dir_is_where_the_stacks_are_listed(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: shop\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    for stack in ("prod", "dev"):
        (tmp_path / "stacks" / f"Pulumi.{stack}.yaml").write_text("config: {}\n")
    (tmp_path / "Pulumi.ignored.yaml").write_text("config: {}\n")  # outside stackConfigDir
    assert PulumiProject.find(tmp_path).stacks() == ["dev", "prod"]


def test_no_pulumi_yaml_is_one_line_saying_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(
        UserError, match=r"^no Pulumi\.yaml in .* or above: run from the project, or pass --project-dir$"
    ):
        PulumiProject.find(tmp_path)


def test_a_stack_without_a_file_has_no_config_as_for_the_pulumi_cli(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: shop\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text("config: {}\n")
    project = PulumiProject.find(tmp_path)
    assert project.stack_settings("qa") == ({}, [])
    assert project.missing_stack_file("qa") == "stacks/Pulumi.qa.yaml (stacks with a file: dev)"
    assert project.missing_stack_file("dev") is None


def test_stack_settings_are_full_keys_with_string_values(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: shop\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  pairedbus:backlogQueueCount: 3\n  shop:tags: {a: b}\n")
    settings, secrets = PulumiProject.find(tmp_path).stack_settings("dev")
    assert settings["pairedbus:backlogQueueCount"] == "3"
    assert settings["shop:tags"] == '{"a": "b"}'
    assert secrets == []


def test_a_broken_pulumi_yaml_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: [unclosed\n")
    with pytest.raises(UserError):
        PulumiProject.find(tmp_path)
