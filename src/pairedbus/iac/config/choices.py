"""The settings with a fixed set of values: one enum per choice, declared once.

The stack-config model (`schema.py`) validates against these and the components' typed args (`components/args.py`,
generated from the model) carry them, so Pulumi's analyzer serves each as a schema enum to other languages with its
members' descriptions (the docstrings below). A stack file or a Python program writes the value (`Premium`); the model
holds the member, which is a `str` equal to it.
"""

from enum import Enum, StrEnum
from typing import Any

from pairedbus import contract


class Sku(StrEnum):
    """A Service Bus namespace tier (the pair's two namespaces may differ)."""

    STANDARD = contract.SKU_STANDARD
    """Standard: shared capacity, no private endpoints."""
    PREMIUM = contract.SKU_PREMIUM
    """Premium: dedicated messaging units and partitions, private endpoints."""


class PublicNetworkAccess(StrEnum):
    """Whether a namespace takes connections from public networks."""

    ENABLED = "Enabled"
    """Public networks may connect (the only choice for Standard)."""
    DISABLED = "Disabled"
    """Private endpoints only (production; Premium)."""
    SECURED_BY_PERIMETER = "SecuredByPerimeter"
    """A network security perimeter decides."""


class BacklogAuth(StrEnum):
    """How the backlog queues are created through the data plane."""

    ENTRA = "entra"
    """With the deployer's Entra ID identity (Azure Service Bus Data Owner on the secondary)."""
    SAS = "sas"
    """With the secondary's SAS keys: the documented fallback; keeps local auth on the secondary."""


class PrincipalType(StrEnum):
    """What kind of principal runs `pulumi up` (an ARM role assignment must name it)."""

    USER = "User"
    """A person at a terminal."""
    SERVICE_PRINCIPAL = "ServicePrincipal"
    """A CI pipeline's service principal or managed identity."""
    GROUP = "Group"
    """A group."""


def enum_value(value: Any) -> Any:
    """An enum member's value (a schema enum arrives as its member), anything else as it is."""
    return value.value if isinstance(value, Enum) else value
