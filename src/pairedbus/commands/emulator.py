"""`pairedbus emulator serve --config FILE [--port N]`: Service Bus on loopback for any SDK.

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
from typing import TYPE_CHECKING

from pairedbus.errors import UserError

if TYPE_CHECKING:
    from pairedbus.emulator.emulator import Emulator

#: Microsoft's emulator listens on 5672 for AMQP; namespaces after the first take the next ports.
DEFAULT_PORT = 5672


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
        help="serve the namespaces of a Config.json until SIGTERM",
        description="Read Microsoft's Service Bus emulator Config.json as is (any number of namespaces, each on "
        "its own port from --port up), then print `NAME<TAB>CONNECTION_STRING` per namespace once they accept "
        "connections, then `@ca<TAB>FILE`: the CA certificate an administration client on the same connection "
        "string trusts (`connection_verify`). Only loopback (127.0.0.1) is served.",
    )
    serve.add_argument("--config", type=Path, required=True, metavar="FILE", help="Microsoft's emulator Config.json")
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
    from pairedbus.emulator.config import apply_config, load_config
    from pairedbus.emulator.emulator import Emulator

    for flag, port in (("--port", args.port), ("--control-port", args.control_port)):
        if port is not None and not 0 <= port <= 65535:
            raise UserError(f"{flag}: expected 0 to 65535, got {port}")
    config = load_config(args.config)
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
