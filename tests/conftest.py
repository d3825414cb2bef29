"""Shared fixtures: a valid stack config to vary, and a copy of the repository's Pulumi project."""

from __future__ import annotations

import copy
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pairedbus.iac.config import StackConfig, parse_stack_config
from tests import scheduling
from tests.load import pytest_timeout_set_timer
from tests.wheel import build_wheel

REPO = Path(__file__).resolve().parents[1]

__all__ = ["pytest_timeout_set_timer"]  # tests/load.py: pytest-timeout's limits stretched by the load

BASE_CONFIG: dict[str, Any] = {
    "production": False,
    "resourceGroups": {"primary": {"name": "rg-primary"}, "secondary": {"name": "rg-secondary"}},
    "primary": {"name": "contoso-primary", "location": "westeurope", "sku": "Standard"},
    "secondary": {"name": "contoso-secondary", "location": "northeurope", "sku": "Standard"},
    "backlogQueueCount": 3,
    "queues": [
        {"name": "orders", "requiresSession": True},
        {"name": "invoices"},
    ],
    "topics": [{"name": "events", "subscriptions": [{"name": "audit"}, {"name": "billing"}]}],
    "syphon": {"image": "example.azurecr.io/pairedbus-syphon:1.0.0"},
}

PREMIUM = {"sku": "Premium", "capacity": 2, "premiumMessagingPartitions": 2}


@pytest.fixture
def config_dict() -> dict[str, Any]:
    """A fresh, valid `pairedbus:` config (keys without the prefix) to modify in a test."""
    return copy.deepcopy(BASE_CONFIG)


@pytest.fixture
def premium_config_dict(config_dict: dict[str, Any]) -> dict[str, Any]:
    config_dict["primary"].update(PREMIUM)
    config_dict["secondary"].update(PREMIUM)
    return config_dict


@pytest.fixture
def production_config_dict(premium_config_dict: dict[str, Any]) -> dict[str, Any]:
    """A valid production config: Premium, public network access denied on both namespaces."""
    premium_config_dict["production"] = True
    for role in ("primary", "secondary"):
        premium_config_dict[role]["publicNetworkAccess"] = "Disabled"
    return premium_config_dict


@pytest.fixture
def make_config() -> Callable[[dict[str, Any]], StackConfig]:
    return parse_stack_config


@pytest.fixture
def project_copy(tmp_path: Path) -> Path:
    """The repository's Pulumi project (Pulumi.yaml, __main__.py, stacks/), copied so a test can edit its stacks."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(REPO / name, tmp_path / name)
    shutil.copytree(REPO / "stacks", tmp_path / "stacks")
    return tmp_path


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package's wheel, built once per run for every test that installs it (packaging, the user program)."""
    return build_wheel(tmp_path_factory)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    return scheduling.make_scheduler(config, log)
