"""A namespace as the rules see it, whichever shape it arrives in, and its security baseline.

Shapes accepted by `namespace_view`:
- Pulumi inputs of `azure-native:servicebus:Namespace`: `namespaceName`, `location`,
  `sku: {name, tier, capacity}`, `disableLocalAuth`, `minimumTlsVersion`, `premiumMessagingPartitions`;
- azure-native outputs / an ARM resource: `name`, `location`, `sku`, and the rest either flat or
  under `properties`;
- the flat mapping of the rules' interface: `{"name", "location", "sku": "Standard" | {...}, ...}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pairedbus import contract
from pairedbus.rules.findings import LOCAL_AUTH_DISABLED, MANDATORY, MINIMUM_TLS, Finding


@dataclass(frozen=True)
class NamespaceView:
    name: str | None
    location: str | None
    #: "Standard", "Premium", "Basic" or None when not known.
    sku: str | None
    premium_messaging_partitions: int | None
    disable_local_auth: bool | None
    minimum_tls_version: str | None

    @property
    def is_premium(self) -> bool:
        return self.sku == contract.SKU_PREMIUM

    @property
    def partitions(self) -> int:
        return contract.effective_partitions(self.premium_messaging_partitions)

    @property
    def requires_partitioned_entities(self) -> bool:
        return contract.requires_partitioned_entities(self.sku, self.premium_messaging_partitions)

    @property
    def label(self) -> str:
        return self.name or "<namespace>"


def _sku_name(sku: object) -> str | None:
    if isinstance(sku, Mapping):
        sku = sku.get("name") or sku.get("tier")
    if not isinstance(sku, str) or not sku:
        return None
    # ARM and the data plane agree on the spelling; normalise case only.
    return sku[:1].upper() + sku[1:].lower()


def namespace_view(namespace: Mapping[str, object] | NamespaceView) -> NamespaceView:
    if isinstance(namespace, NamespaceView):
        return namespace
    nested = namespace.get("properties")
    props: Mapping[str, object] = nested if isinstance(nested, Mapping) else {}

    def pick(key: str) -> object:
        value = namespace.get(key)
        return props.get(key) if value is None else value

    name = namespace.get("namespaceName") or namespace.get("name")
    location = namespace.get("location")
    partitions = pick("premiumMessagingPartitions")
    if isinstance(partitions, float) and partitions.is_integer():
        partitions = int(partitions)  # JSON and gRPC carry numbers as doubles
    local_auth = pick("disableLocalAuth")
    tls = pick("minimumTlsVersion")
    return NamespaceView(
        name=name if isinstance(name, str) else None,
        location=location if isinstance(location, str) else None,
        sku=_sku_name(namespace.get("sku")),
        premium_messaging_partitions=partitions
        if isinstance(partitions, int) and not isinstance(partitions, bool)
        else None,
        disable_local_auth=local_auth if isinstance(local_auth, bool) else None,
        minimum_tls_version=str(tls) if tls is not None else None,
    )


def normalise_region(location: str) -> str:
    """`West Europe`, `WestEurope`, ` westeurope ` -> `westeurope`; `West US 3` -> `westus3`: the same region."""
    return "".join(location.split()).lower()


def _tls_at_least(version: str | None, minimum: str) -> bool:
    if version is None:
        return False
    try:
        return tuple(int(p) for p in version.split(".")) >= tuple(int(p) for p in minimum.split("."))
    except ValueError:
        return False


def check_namespace_security(namespace: Mapping[str, object] | NamespaceView) -> list[Finding]:
    """Local (SAS) authentication off and TLS 1.2 at least, both set explicitly."""
    ns = namespace_view(namespace)
    findings: list[Finding] = []
    if ns.disable_local_auth is not True:
        findings.append(
            Finding(
                rule=LOCAL_AUTH_DISABLED,
                entity=ns.label,
                namespace=ns.name,
                property="disableLocalAuth",
                expected=True,
                actual=ns.disable_local_auth,
                severity=MANDATORY,
                message=f"namespace {ns.label}: disableLocalAuth expected true, got {ns.disable_local_auth!r}",
            )
        )
    if not _tls_at_least(ns.minimum_tls_version, contract.MINIMUM_TLS_VERSION):
        findings.append(
            Finding(
                rule=MINIMUM_TLS,
                entity=ns.label,
                namespace=ns.name,
                property="minimumTlsVersion",
                expected=contract.MINIMUM_TLS_VERSION,
                actual=ns.minimum_tls_version,
                severity=MANDATORY,
                message=(
                    f"namespace {ns.label}: minimumTlsVersion expected {contract.MINIMUM_TLS_VERSION!r} or later, "
                    f"got {ns.minimum_tls_version!r}"
                ),
            )
        )
    return findings
