"""What a valid stack config may still get wrong: warnings, one line each naming its key path.

A warning does not stop a deployment (ARM or the service has the last word) but is shown wherever the
config is validated: inside a Pulumi program through `pulumi.log.warn` (the CLI's warning channel),
and by `pairedbus plan`, which prints the warnings the program logged.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING

from pairedbus.iac.config.keys import CONFIG_NAMESPACE
from pairedbus.iac.config.regions import not_in_table_warning, region

if TYPE_CHECKING:
    from pairedbus.iac.config.schema import StackConfig

#: The warnings already logged to each running Pulumi engine: a program validates its config more
#: than once (the loader, then the component), and a warning is worth one line.
_LOGGED: weakref.WeakKeyDictionary[object, set[str]] = weakref.WeakKeyDictionary()


def configured_locations(config: StackConfig) -> Iterator[tuple[str, str | None]]:
    """Each location the stack names, with its key path (the syphon's is None when it follows the primary)."""
    yield "primary.location", config.primary.location
    yield "secondary.location", config.secondary.location
    yield "syphon.location", config.syphon.location


def regions_not_in_the_table(config: StackConfig) -> Iterator[str]:
    for path, location in configured_locations(config):
        if location is not None and region(location) is None:
            yield not_in_table_warning(path, location)


def config_warnings(config: StackConfig) -> list[str]:
    """Every warning of a valid config, each as `pairedbus:<path>: ...`."""
    return [f"{CONFIG_NAMESPACE}:{line}" for line in regions_not_in_the_table(config)]


def log_in_program(warnings: list[str]) -> None:
    """Log each warning once to the running Pulumi program's engine; outside a program, nothing."""
    if not warnings:
        return
    try:
        from pulumi import log
        from pulumi.runtime.settings import get_engine
    except ModuleNotFoundError:  # validating a config needs no Pulumi (the `iac` extra)
        return
    engine = get_engine()
    if engine is None:
        return
    try:
        logged = _LOGGED.setdefault(engine, set())
    except TypeError:  # an engine that cannot be weakly referenced: log every time rather than never
        logged = set()
    for warning in warnings:
        if warning not in logged:
            logged.add(warning)
            log.warn(warning)
