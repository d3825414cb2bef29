"""The runtime (contract, sender, syphon, pairing, service, the Service Bus fake, the CLI's entry)
imports without the `iac`, `policy` and `audit` extras: Pulumi, azure-native, pulumi-policy and PySpark.

Each runtime module is imported in a fresh interpreter whose import system refuses those packages (a meta-path
finder placed before every other), so a module that needs one fails, and one that merely tries is reported too.
The module list is discovered by walking the package, so a new runtime module is covered without editing this.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.load import guard

#: Packages the runtime must never import (what the extras install).
EXTRAS_ONLY = ("pulumi", "pulumi_azure_native", "pulumi_policy", "pyspark")
#: Subpackages that are the extras' own code: the infrastructure, the policy pack and the estate audit.
NEEDS_EXTRAS = ("pairedbus.iac", "pairedbus.policy", "pairedbus.pipeline")

_CHILD = textwrap.dedent(
    """
    import importlib, json, pkgutil, sys

    blocked, attempts = tuple(sys.argv[1].split(",")), []

    class RefuseExtras:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in blocked:
                attempts.append(name)
                raise ModuleNotFoundError(f"{name} is not installed (blocked by the test)", name=name)
            return None

    sys.meta_path.insert(0, RefuseExtras())
    import pairedbus

    skip = tuple(sys.argv[2].split(","))
    modules = sorted(
        m.name for m in pkgutil.walk_packages(pairedbus.__path__, "pairedbus.")
        if not any(m.name == s or m.name.startswith(s + ".") for s in skip)
    )
    failures = {}
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:
            failures[name] = f"{type(exc).__name__}: {exc}"
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in blocked)
    print(json.dumps({"modules": modules, "failures": failures, "attempts": attempts, "loaded": loaded,
                      "file": pairedbus.__file__}))
    """
)


@pytest.fixture(scope="module")
def child() -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, ",".join(EXTRAS_ONLY), ",".join(NEEDS_EXTRAS)],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=guard(240),
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_every_runtime_module_imports_without_the_extras(child: dict[str, object]) -> None:
    assert child["failures"] == {}


def test_none_of_the_extras_was_imported_or_even_tried(child: dict[str, object]) -> None:
    assert child["loaded"] == []
    assert child["attempts"] == []


def test_the_walk_found_the_runtime(child: dict[str, object]) -> None:
    modules = set(child["modules"])  # type: ignore[arg-type]
    for expected in (
        "pairedbus.contract",
        "pairedbus.errors",
        "pairedbus.pairing.aliasing",
        "pairedbus.pairing.receive",
        "pairedbus.pairing.connections",
        "pairedbus.sender.sender",
        "pairedbus.syphon.syphon",
        "pairedbus.service.syphon_process",
        "pairedbus.service.health_server",
        "pairedbus.servicebus.world",
        "pairedbus.cli",
    ):
        assert expected in modules
    assert not any(m.startswith(NEEDS_EXTRAS) for m in modules)
    assert len(modules) >= 50


def test_the_blocker_does_block() -> None:
    """The same child, told to keep the infrastructure in, reports it: the test can fail."""
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, ",".join(EXTRAS_ONLY), "pairedbus.policy,pairedbus.pipeline"],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=guard(240),
        check=True,
    )
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert "pairedbus.iac.components.paired_namespace" in report["failures"]
    assert "pulumi" in report["attempts"]
