"""`pairedbus emulator serve --config FILE [--port N]`: Service Bus on loopback for any SDK.

`--config` takes Microsoft's emulator Config.json (JSON with `UserConfig`) or a pairedbus stack file
(`stacks/Pulumi.<stack>.yaml`, YAML with `config:`), told apart by the content. A stack file is read
through the IaC's own config model and served as the IaC would create it: the primary namespace with
the stack's queues, topics and subscriptions, the secondary with its backlog queues.

Once every namespace accepts connections it prints one line per namespace, its name and full
connection string, tab-separated, on stdout (a script reads them); it stops cleanly on SIGTERM
or Ctrl-C. Keys are the emulator's well-known development key, never a secret.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pairedbus.errors import UserError

if TYPE_CHECKING:
    from pairedbus.emulator.config import EmulatorConfig
    from pairedbus.emulator.emulator import Emulator
    from pairedbus.iac.config import StackConfig

#: Microsoft's emulator listens on 5672 for AMQP; namespaces after the first take the next ports.
DEFAULT_PORT = 5672
#: How much of `--config` is read to tell Config.json (`{` first) from a stack file (YAML).
_SNIFF_BYTES = 64 * 1024


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "emulator",
        help="serve Service Bus namespaces on loopback over AMQP 1.0 for any SDK",
        description="A Service Bus emulator: the unmodified SDK (Python, Node, ...) connects with the printed "
        "connection strings (UseDevelopmentEmulator=true).",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    serve = actions.add_parser(
        "serve",
        help="serve the namespaces of a Config.json or a stack file until SIGTERM",
        description="Read Microsoft's Service Bus emulator Config.json as is (any number of namespaces, each on "
        "its own port from --port up) or a pairedbus stack file (Pulumi.<stack>.yaml: the primary namespace with "
        "the stack's queues, topics and subscriptions, the secondary with its backlog queues), then print `NAME<TAB>CONNECTION_STRING` per namespace once they accept "
        "connections, then `@ca<TAB>FILE`: the CA certificate an administration client on the same connection "
        "string trusts (`connection_verify`). Only loopback (127.0.0.1) is served.",
    )
    serve.add_argument(
        "--config",
        type=Path,
        required=True,
        metavar="FILE",
        help="Microsoft's emulator Config.json, or a pairedbus stack file (stacks/Pulumi.<stack>.yaml)",
    )
    serve.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        metavar="N",
        help=f"the first namespace's AMQP port (default {DEFAULT_PORT}; 0 picks free ports)",
    )
    serve.add_argument(
        "--control-port",
        type=int,
        metavar="N",
        help="also serve the control endpoint (faults while it runs, entities, counts) on this loopback port "
        "(0 picks a free one); printed last as `@control<TAB>URL`",
    )
    serve.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pairedbus import contract
    from pairedbus.emulator.config import apply_config
    from pairedbus.emulator.emulator import Emulator

    for flag, port in (("--port", args.port), ("--control-port", args.control_port)):
        if port is not None and not 0 <= port <= 65535:
            raise UserError(f"{flag}: expected 0 to 65535, got {port}")
    config = read_config(args.config)
    names = [ns.name for ns in config.user_config.namespaces]
    if args.port and args.port + len(names) - 1 > 65535:
        raise UserError(f"--port: {len(names)} namespaces from port {args.port} run past 65535")
    emulator = Emulator(names)
    apply_config(emulator.world, {n: contract.service_bus_fqdn(n) if "." not in n else n for n in names}, config)
    return asyncio.run(_serve(emulator, args.port, args.control_port))


async def _serve(emulator: Emulator, port: int, control_port: int | None) -> int:
    from pairedbus.emulator.control import CA_LINE, CONTROL_LINE, ControlEndpoint

    control = ControlEndpoint(emulator) if control_port is not None else None
    try:
        await emulator.start(port)
    except OSError as exc:
        raise UserError(f"--port: cannot listen on 127.0.0.1 from port {port}: {exc.strerror or exc}") from None
    if control is not None:
        try:
            await control.start(control_port or 0)
        except OSError as exc:
            await emulator.stop()
            raise UserError(
                f"--control-port: cannot listen on 127.0.0.1:{control_port}: {exc.strerror or exc}"
            ) from None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        for name, broker in emulator.brokers.items():
            print(f"{name}\t{broker.connection_string()}", flush=True)
        if emulator.ca_file is not None:
            print(f"{CA_LINE}\t{emulator.ca_file}", flush=True)
        if control is not None:
            print(f"{CONTROL_LINE}\thttp://127.0.0.1:{control.port}", flush=True)
        await stop.wait()
    finally:
        if control is not None:
            await control.stop()
        await emulator.stop()
    print("stopped", file=sys.stderr, flush=True)
    return 0


def read_config(path: Path) -> EmulatorConfig:
    """Config.json (its first character `{`) or a stack file, as the emulator's config records; one
    UserError line naming the field otherwise."""
    from pairedbus.emulator.config import load_config

    try:
        with path.open("rb") as file:
            head = file.read(_SNIFF_BYTES).lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    except OSError:
        head = b""  # load_config names what is wrong with the path
    if head in (b"{", b""):
        return load_config(path)
    return emulator_config_of(_stack_config(path))


def _stack_config(path: Path) -> StackConfig:
    from pairedbus.iac.config import StackConfigError, config_from_pulumi_settings, parse_stack_config
    from pairedbus.iac.config.stack_file import read_stack_settings

    try:
        settings, _ = read_stack_settings(path)
        if not settings and not settings.problems:
            raise UserError(f"{path.name}: neither Microsoft's Config.json (UserConfig) nor a stack file (config:)")
        return parse_stack_config(config_from_pulumi_settings(settings))
    except StackConfigError as exc:
        more = f" (and {len(exc.problems) - 1} more)" if len(exc.problems) > 1 else ""
        raise UserError(f"--config: {path.name}: {exc.problems[0]}{more}") from None
    except UserError as exc:
        raise UserError(f"--config: {exc}") from None


#: The stack-config fields `MessagingEntities` passes to each azure-native resource, by the same name
#: (duplicate detection aside: the IaC derives it from `paired`).
_SUBSCRIPTION_FIELDS = (
    "requires_session",
    "lock_duration",
    "max_delivery_count",
    "default_message_time_to_live",
    "dead_lettering_on_message_expiration",
    "auto_delete_on_idle",
    "forward_to",
)
_TOPIC_FIELDS = (
    "max_size_in_megabytes",
    "enable_partitioning",
    "duplicate_detection_history_time_window",
    "default_message_time_to_live",
    "auto_delete_on_idle",
)
_QUEUE_FIELDS = tuple(dict.fromkeys((*_TOPIC_FIELDS, *_SUBSCRIPTION_FIELDS)))


def _properties(entity: Any, fields: tuple[str, ...]) -> dict[str, Any]:
    """The properties the IaC sets; the ones it leaves unset (None) take the service's defaults."""
    properties = {name: getattr(entity, name) for name in fields if getattr(entity, name) is not None}
    if hasattr(entity, "duplicate_detection"):
        properties["requires_duplicate_detection"] = entity.duplicate_detection
    return properties


def emulator_config_of(stack: StackConfig) -> EmulatorConfig:
    """The stack's namespaces and entities as `iac.components` creates them (`MessagingEntities` on the
    primary, `BacklogQueues` on the secondary), in the emulator's config records (model property names)."""
    from pairedbus import contract
    from pairedbus.emulator.config import EmulatorConfig

    queues = [{"Name": q.name, "Properties": _properties(q, _QUEUE_FIELDS)} for q in stack.queues]
    topics = [
        {
            "Name": t.name,
            "Properties": _properties(t, _TOPIC_FIELDS),
            "Subscriptions": [
                {"Name": s.name, "Properties": _properties(s, _SUBSCRIPTION_FIELDS)} for s in t.subscriptions
            ],
        }
        for t in stack.topics
    ]
    backlog_properties = {contract.ARM_TO_SDK_QUEUE_FIELD[k]: v for k, v in contract.BACKLOG_QUEUE_PROPERTIES.items()}
    if stack.secondary.requires_partitioned_entities:
        backlog_properties[contract.ARM_TO_SDK_QUEUE_FIELD[contract.BACKLOG_PARTITIONING_PROPERTY]] = True
    backlog = [
        {"Name": name, "Properties": dict(backlog_properties)}
        for name in contract.backlog_queue_names(stack.primary.name, stack.backlog_queue_count)
    ]
    return EmulatorConfig.model_validate(
        {
            "UserConfig": {
                "Namespaces": [
                    {"Name": stack.primary.name, "Queues": queues, "Topics": topics},
                    {"Name": stack.secondary.name, "Queues": backlog},
                ]
            }
        }
    )
