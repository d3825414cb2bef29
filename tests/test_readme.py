"""The README's examples run as written (on the Service Bus fake)."""

from __future__ import annotations

import re
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
        orders = world.namespace("contoso-prod-weu.servicebus.windows.net").create_queue("orders", requires_session=True)
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
