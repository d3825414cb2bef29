"""Everything of pairedbus that imports Pulumi: components, the backlog-queue dynamic provider, the
stack-config model, the offline render under Pulumi's mocks (`render/`) and live drift. Needs the `iac` extra
(`pip install 'pairedbus[iac]'`); the runtime (sender, syphon) never imports this package.

`from pairedbus.iac import PairedNamespace, PairedNamespaceArgs` is the way in for a Pulumi program. They are
loaded on first use, so that `pairedbus.iac.config` (used by the policy pack, which has no azure-native)
stays light.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pairedbus.iac.components.args import PairedNamespaceArgs
    from pairedbus.iac.components.paired_namespace import PairedNamespace

__all__ = ["PairedNamespace", "PairedNamespaceArgs"]


def __getattr__(name: str) -> Any:
    if name == "PairedNamespace":
        from pairedbus.iac.components import paired_namespace

        return paired_namespace.PairedNamespace
    if name == "PairedNamespaceArgs":  # generated from the config model with the parts' settings
        from pairedbus.iac.components import args

        return args.PairedNamespaceArgs
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
