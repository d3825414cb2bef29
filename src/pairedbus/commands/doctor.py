"""`pairedbus doctor`: what the real commands need on this machine, one line each.

It never touches the network: the Pulumi login is read with `pulumi whoami` and Azure credentials
from the environment or `az account show`; it does not try `DefaultAzureCredential`, whose chain
probes the instance-metadata address.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pairedbus.errors import EXIT_FINDINGS, EXIT_OK

#: A tool that does not answer within this many seconds counts as missing.
PROBE_TIMEOUT_SECONDS = 20
MIN_PYTHON = (3, 11)
#: pyspark 4 runs on Java 17 or newer (Spark 4.0 release notes: "Java 8 and 11 are dropped").
MIN_JAVA = 17


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    needed_by: str

    def line(self) -> str:
        return f"{'ok' if self.ok else 'MISSING':8} {self.name:18} {self.detail}  (needed by {self.needed_by})"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check what the real commands need: Python, extras, Java, the Pulumi CLI and login, Azure credentials",
        description="One line per requirement, saying what is missing and how to get it. Offline: no network "
        "call is made. Exit 1 when anything is missing.",
    )
    parser.set_defaults(handler=run)


def _run(argv: Sequence[str]) -> subprocess.CompletedProcess[str] | None:
    if shutil.which(argv[0]) is None:
        return None
    try:
        return subprocess.run(
            list(argv), capture_output=True, text=True, timeout=PROBE_TIMEOUT_SECONDS, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def check_python() -> Check:
    found = ".".join(map(str, sys.version_info[:3]))
    ok = sys.version_info[:2] >= MIN_PYTHON
    want = ".".join(map(str, MIN_PYTHON))
    return Check("python", ok, found if ok else f"{found}: need >= {want}", "everything")


def check_extra(extra: str, modules: Sequence[str], needed_by: str) -> Check:
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        return Check(f"extra [{extra}]", False, f"no {', '.join(missing)}: pip install 'pairedbus[{extra}]'", needed_by)
    return Check(f"extra [{extra}]", True, ", ".join(modules), needed_by)


def _java_failure(java: str) -> tuple[subprocess.CompletedProcess[str] | None, str | None]:
    """`java -version`, or why it did not start or failed: the JVM's own first line, not a guess."""
    try:
        result = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=PROBE_TIMEOUT_SECONDS, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        return None, f"{java} -version did not answer within {PROBE_TIMEOUT_SECONDS:g} s"
    except OSError as exc:
        return None, f"{java} could not be started ({exc.strerror or type(exc).__name__})"
    if result.returncode != 0:
        lines = [line.strip() for line in (result.stderr + result.stdout).splitlines() if line.strip()]
        first = lines[0][:200] if lines else "no output"
        return None, f"{java} -version failed with exit {result.returncode}: {first}"
    return result, None


def check_java() -> Check:
    java = shutil.which("java")
    if java is None:
        return Check("java", False, f"no java on PATH: install Java {MIN_JAVA} (e.g. openjdk-{MIN_JAVA}-jre)", "audit")
    result, why = _java_failure(java)
    if result is None:
        return Check("java", False, f"{why}: fix or replace it with Java {MIN_JAVA}+ (JAVA_HOME, PATH)", "audit")
    match = re.search(r'version "(\d+)(?:\.(\d+))?', result.stderr + result.stdout)
    major = int(match.group(1)) if match else 0
    major = int(match.group(2)) if match and major == 1 and match.group(2) else major  # "1.8" is Java 8
    if major < MIN_JAVA:
        return Check("java", False, f"Java {major or '?'}: Spark 4 needs Java >= {MIN_JAVA}", "audit")
    return Check("java", True, f"Java {major}", "audit")


def check_pulumi_cli() -> Check:
    result = _run(["pulumi", "version"])
    if result is None or result.returncode != 0:
        return Check("pulumi CLI", False, "not on PATH: https://www.pulumi.com/docs/install/", "pulumi up / preview")
    return Check("pulumi CLI", True, result.stdout.strip(), "pulumi up / preview")


def check_pulumi_login() -> Check:
    result = _run(["pulumi", "whoami"])
    if result is None:
        return Check("pulumi login", False, "no Pulumi CLI", "pulumi up / preview")
    if result.returncode != 0:
        return Check("pulumi login", False, "not logged in: run `pulumi login`", "pulumi up / preview")
    return Check("pulumi login", True, result.stdout.strip(), "pulumi up / preview")


#: The variables azure-identity's EnvironmentCredential and WorkloadIdentityCredential read.
_SECRET_VARIABLES = ("AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_CLIENT_CERTIFICATE_PATH")


def check_azure_credentials() -> Check:
    needed_by = "pulumi up, drift, syphon, exports"
    if os.environ.get("AZURE_CLIENT_ID") and os.environ.get("AZURE_TENANT_ID"):
        kind = next((v for v in _SECRET_VARIABLES if os.environ.get(v)), None)
        if kind:
            return Check("azure credentials", True, f"service principal from the environment ({kind})", needed_by)
    result = _run(["az", "account", "show", "--output", "none"])
    if result is not None and result.returncode == 0:
        return Check("azure credentials", True, "Azure CLI signed in", needed_by)
    if result is not None:
        return Check("azure credentials", False, "Azure CLI not signed in: run `az login`", needed_by)
    return Check(
        "azure credentials",
        False,
        "none: run `az login`, or set AZURE_CLIENT_ID, AZURE_TENANT_ID and a secret or federated token",
        needed_by,
    )


CHECKS: tuple[Callable[[], Check], ...] = (
    check_python,
    lambda: check_extra("iac", ("pulumi", "pulumi_azure_native", "pulumi_policy"), "plan, drift, pulumi up"),
    lambda: check_extra("audit", ("pyspark",), "audit"),
    check_java,
    check_pulumi_cli,
    check_pulumi_login,
    check_azure_credentials,
)


def run(_args: argparse.Namespace) -> int:
    checks = [check() for check in CHECKS]
    for check in checks:
        print(check.line())
    missing = sum(not c.ok for c in checks)
    print(f"{len(checks) - missing} of {len(checks)} ready" + (f"; {missing} missing" if missing else ""))
    return EXIT_FINDINGS if missing else EXIT_OK
