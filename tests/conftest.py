"""Shared fixtures: a valid stack config to vary, and a copy of the repository's Pulumi project."""

from __future__ import annotations

import copy
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pairedbus.iac.config import StackConfig, parse_stack_config
from tests.wheel import build_wheel

REPO = Path(__file__).resolve().parents[1]

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


#: Tests that share one pytest-xdist worker, by path prefix: the Spark suite, so that the run starts one JVM (its
#: session fixture is per process), and the two users of the wheel, so that it is built once.
SHARED_WORKER: dict[str, str] = {
    "tests/pipeline/": "spark",
    "tests/test_packaging.py": "wheel",
    "tests/iac/test_user_program.py": "wheel",
}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadfile` (scripts/test) with the SHARED_WORKER groups: each module on one worker, so that its
    module fixtures are built once, and each group on one worker. Not `--dist loadgroup` with `xdist_group`
    marks: pytest-xdist 3.8 renames a grouped test through `item._nodeid`, which pytest 9.2 no longer reads."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedWorkerScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = super()._split_scope(nodeid)
            return next((group for prefix, group in SHARED_WORKER.items() if module.startswith(prefix)), module)

    return SharedWorkerScheduling(config, log)
