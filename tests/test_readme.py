"""The README's examples run as written (on the Service Bus fake)."""

from __future__ import annotations

import fnmatch
import itertools
import re
import subprocess
import textwrap
from pathlib import Path

from pairedbus import contract
from pairedbus.testing import mock_servicebus

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


async def test_the_failover_sender_example_sends_to_the_primary() -> None:
    (example,) = [block for block in _python_blocks() if "pairedbus.iac" not in block]
    with mock_servicebus() as world:
        orders = world.namespace("contoso-prod-weu.servicebus.windows.net").create_queue(
            "orders", requires_session=True
        )
        for index in range(10):
            world.namespace("contoso-prod-neu.servicebus.windows.net").create_queue(
                contract.backlog_queue_name("contoso-prod-weu", index)
            )
        body = "async def example():\n" + textwrap.indent(example, "    ")
        scope: dict[str, object] = {}
        exec(compile(body, str(README), "exec"), scope)
        await scope["example"]()  # type: ignore[operator]
        (message,) = orders.active_messages()
        assert message.session_id == "customer-42"


def test_the_readme_starts_with_the_two_commands() -> None:
    first_block = re.search(r"```bash\n(.*?)```", README.read_text(), flags=re.DOTALL)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines() if line.strip()]
    assert commands == ["scripts/main-job", "scripts/test"]
    ci = (README.parent / ".ci" / "run").read_text()
    assert "scripts/test" in ci


# --- A newcomer's path (issue 20, item 7) --------------------------------------------------------

REPO = README.parent


def _section(title: str) -> str:
    text = README.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def _bash_commands(text: str) -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.DOTALL)
    return [line.split("  #")[0].strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_real_use_starts_with_pairedbus_doctor() -> None:
    commands = _bash_commands(_section("Real use"))
    assert commands[0] == "pairedbus doctor"
    assert "pairedbus doctor" in _section("Real use").split("```", 2)[2]  # and the text says why, after the block


def test_no_install_line_asks_the_package_index_for_pairedbus() -> None:
    """pairedbus is not on PyPI: every install of it names a path (a checkout), never the bare name."""
    text = README.read_text()
    installs = re.findall(r"pip install[^\n`]*", text)
    assert installs
    for line in installs:
        for target in re.findall(r"'([^']*)'|(\S+)", line.split("#")[0])[2:]:
            name = next(t for t in target if t)
            if "pairedbus" in name.lower():
                assert "/" in name or name.startswith("."), line


def test_pulumi_package_add_takes_a_checkout_path_that_holds_the_plugin() -> None:
    (line,) = [c for c in _bash_commands(README.read_text()) if c.startswith("pulumi package add")]
    target = line.split()[3]
    assert "://" not in target and target.startswith(("../", "./", "/"))
    assert (REPO / "PulumiPlugin.yaml").is_file()  # a checkout is the directory holding it


def _policy_venv_command() -> str:
    (command,) = re.findall(r"`(\(cd policies && python -m venv venv && [^`]*)`", README.read_text())
    return command


def test_the_by_hand_policy_venv_command_resolves_its_requirements_from_the_repository_root() -> None:
    """pip reads a requirement's path against its working directory: simulate the command's `cd` from the root
    and resolve every path of policies/requirements.txt there; each must be this repository."""
    command = _policy_venv_command()
    cwd = REPO
    for part in command.strip("()").split("&&"):
        words = part.split()
        if words[0] == "cd":
            cwd = (cwd / words[1]).resolve()
        if "pip" in words[0] and "-r" in words:
            requirements = cwd / words[words.index("-r") + 1]
            assert requirements == REPO / "policies" / "requirements.txt"
    lines = [ln.strip() for ln in requirements.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    paths = [ln.removeprefix("-e ").split("[")[0] for ln in lines if ln.startswith(("-e ", ".", "/"))]
    assert paths and all((cwd / p).resolve() == REPO for p in paths)
    assert all((cwd / p / "pyproject.toml").is_file() for p in paths)


def test_one_statement_of_who_creates_the_policy_venv() -> None:
    text = " ".join(README.read_text().split())
    sentences = [s for s in re.split(r"(?<=[.!?])\s", text) if "policies/venv" in s]
    assert sentences
    for sentence in sentences:
        assert not re.search(r"Pulumi creates `?policies/venv|preview[^.]*creates `?policies/venv", sentence), sentence
    assert "neither creates it nor installs into it" in text
    comment = (REPO / "policies" / "requirements.txt").read_text()
    assert (
        "nothing installs them implicitly" in comment
        and "Installed into policies/venv by `pulumi preview" not in comment
    )


def test_every_relative_link_and_docs_path_exists() -> None:
    text = README.read_text()
    links = re.findall(r"\]\((?!https?://|#)([^)\s]+)\)", text)
    paths = re.findall(r"`((?:docs|stacks|policies|examples)/[\w./-]*)`", text)
    assert "docs/spec/" in links
    created = {"policies/venv", "policies/venv/"}  # what the reader creates (the policy pack's venv)
    for target in {*links, *paths} - created:
        assert (REPO / target).exists(), target


def test_the_comparison_answers_side_by_side_with_microsoft_sources() -> None:
    section = _section("Paired namespaces, Geo-Disaster Recovery or Geo-Replication?")
    header = next(line for line in section.splitlines() if line.startswith("| |"))
    assert [c.strip() for c in header.strip("|").split("|")][1:] == [
        "**Paired namespaces** (this project)",
        "**Geo-Disaster Recovery**",
        "**Geo-Replication**",
    ]
    rows = {line.split("|")[1].strip() for line in section.splitlines() if line.startswith("| ") and "---" not in line}
    assert {
        "Tiers",
        "What is replicated",
        "What a sender sees during an outage",
        "Who acts",
        "Ordering and duplicates",
        "Cost",
    } <= rows
    for url in (
        "https://learn.microsoft.com/azure/service-bus-messaging/service-bus-geo-dr",
        "https://learn.microsoft.com/azure/service-bus-messaging/service-bus-geo-replication",
        "https://azure.microsoft.com/pricing/details/service-bus/",
    ):
        assert url in section
    assert "Premium only [1]" in section and "Premium only [2]" in section and "per GB" in section


def test_the_layout_names_every_entry_of_the_package_and_nothing_else() -> None:
    # Issue 37 item 5: the layout section omitted pairing/ (and later cli, entity_limits, __main__).
    section = README.read_text(encoding="utf-8").split("## Layout", 1)[1]
    block = section.split("```\n", 2)[1]
    listed = set()
    for line in block.splitlines():
        if line.startswith("  ") and not line.startswith("   "):  # an entry of src/pairedbus/
            listed |= set(itertools.takewhile(lambda word: word.endswith(("/", ".py")), line.split()))
    package = README.parent / "src" / "pairedbus"
    present = {
        f"{entry.name}/" if entry.is_dir() else entry.name
        for entry in package.iterdir()
        if (entry.is_dir() and (entry / "__init__.py").exists())
        or (entry.suffix == ".py" and entry.name != "__init__.py")
    }
    assert listed == present, (sorted(present - listed), sorted(listed - present))


def _root_entries_named(block: str, entries: set[str]) -> set[str]:
    """The repository's top-level entries the layout's unindented lines name (`requirements-*lock.txt`: each lock)."""
    named = set()
    for line in block.splitlines():
        if line.startswith(" "):
            continue
        for word in line.split():
            matches = {e for e in entries if fnmatch.fnmatchcase(e, word.split("/", 1)[0])}
            if not matches:
                break
            named |= matches
    return named


def test_the_layout_names_every_entry_of_the_repository_root() -> None:
    block = README.read_text(encoding="utf-8").split("## Layout", 1)[1].split("```\n", 2)[1]
    root = README.parent
    tracked = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout
    entries = {path.split("/", 1)[0] for path in tracked.splitlines()} - {".ci", ".dockerignore", ".gitignore"}
    assert sorted(entries - _root_entries_named(block, entries)) == []


def test_the_root_walker_reads_names_and_globs_and_stops_at_the_prose() -> None:
    entries = {"Dockerfile", "requirements-lock.txt", "requirements-build-lock.txt", "stacks", "src", "scripts"}
    block = "requirements-*lock.txt  Dockerfile  the locks, see scripts\nstacks/   dev\n  src/   indented: not the root"
    assert _root_entries_named(block, entries) == {
        "Dockerfile",
        "requirements-lock.txt",
        "requirements-build-lock.txt",
        "stacks",
    }


def test_the_sample_plan_is_what_plan_dev_prints(capsys) -> None:
    # Issue 36 item 5: the sample tree kept names from before children were named from their parent.
    from pairedbus.cli import main

    text = README.read_text(encoding="utf-8")
    start = text.index("```text\n", text.index("What `pairedbus plan dev` prints")) + len("```text\n")
    sample = [line for line in text[start : text.index("```", start)].splitlines() if not line.endswith("...")]
    assert main(["plan", "dev"]) == 0
    printed = capsys.readouterr().out.splitlines()
    missing = [line for line in sample if line not in printed]
    assert missing == []
