"""The CrossGuard policies: thin adapters from the engine's arguments to `pairedbus.rules`.

Resource policies see one resource's inputs; anything that needs a second resource (the
namespace of a queue, the pair, counts per namespace) is a stack policy, which sees every
resource with its dependencies and parent resolved.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
)

from pairedbus import contract, rules
from pairedbus.policy.resources import StackView, is_backlog_queue_resource, settings
from pairedbus.rules import Finding


def _report(findings: Iterable[Finding], report: ReportViolation, urn: str | None = None, *, rule: str) -> None:
    for finding in findings:
        if finding.rule == rule:
            report(finding.message, urn)


# --- Resource policies --------------------------------------------------------------------


def _namespace_rule(rule: str) -> Callable[[ResourceValidationArgs, ReportViolation], None]:
    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        if args.resource_type == contract.TYPE_NAMESPACE:
            _report(rules.check_namespace_security(settings(args.props)), report, rule=rule)

    validate.__name__ = f"validate_{rule.replace('-', '_')}"
    return validate


validate_local_auth_disabled = _namespace_rule(rules.LOCAL_AUTH_DISABLED)
validate_minimum_tls = _namespace_rule(rules.MINIMUM_TLS)


def validate_backlog_queue_settings(args: ResourceValidationArgs, report: ReportViolation) -> None:
    """The table, exactly, on the azure-native Queue or the backlog dynamic resource. The
    namespace is not visible here: its partitioning is judged by premium-entities-partitioned."""
    props = settings(args.props)
    if not is_backlog_queue_resource(args.resource_type, props):
        return
    name = props.get("queueName") or props["name"]
    _report(rules.check_backlog_queue(name, props, None), report, rule=rules.BACKLOG_QUEUE_SETTINGS)


# --- Stack policies -------------------------------------------------------------------------


def validate_premium_entities_partitioned(args: StackValidationArgs, report: ReportViolation) -> None:
    stack = StackView(args.resources)
    for resource in [*stack.entities, *stack.backlog_queues]:
        ns = stack.backlog_namespace(resource) if resource in stack.backlog_queues else stack.namespace_of(resource)
        if ns is None:
            continue
        findings = rules.check_premium_entity_partitioned(
            stack.name_of(resource), stack.props[resource.urn], stack.props[ns.urn]
        )
        _report(findings, report, resource.urn, rule=rules.PREMIUM_ENTITIES_PARTITIONED)


#: backlog-queue-set's policy setting is the stack's configured `contract.BACKLOG_QUEUE_COUNT_KEY`. `pairedbus plan`
#: passes it from the stack config; without it the queues declared stand in for the count.


def validate_backlog_queue_set(args: StackValidationArgs, report: ReportViolation) -> None:
    """Indices below the count present, none repeated, all in the secondary with the primary's
    prefix. Queues beyond the count are allowed extras: not reported."""
    stack = StackView(args.resources)
    primary, secondary = stack.roles.get(contract.ROLE_PRIMARY), stack.roles.get(contract.ROLE_SECONDARY)
    if primary is None or secondary is None:
        if stack.backlog_queues:
            report(
                f"{len(stack.backlog_queues)} backlog queues but no primary/secondary namespace pair found in the stack",
                None,
            )
        return
    secondary_name = stack.namespace_label(secondary)
    by_name = {stack.name_of(q): q for q in stack.backlog_queues}
    for queue in stack.backlog_queues:
        holder = stack.namespace_of(queue)
        declared = stack.props[queue.urn].get("namespaceName")
        ns_name = declared if isinstance(declared, str) else (stack.namespace_label(holder) if holder else None)
        if ns_name is None and holder is None:
            continue  # name unknown and nothing to resolve it by: nothing to judge yet
        _report(
            rules.check_backlog_in_secondary(stack.name_of(queue), ns_name, secondary_name),
            report,
            queue.urn,
            rule=rules.BACKLOG_QUEUE_SET,
        )
    count = args.get_config().get(contract.BACKLOG_QUEUE_COUNT_KEY)
    findings = rules.check_pair(stack.props[primary.urn], stack.props[secondary.urn], list(by_name), count=count)
    for finding in findings:
        if finding.rule == rules.BACKLOG_QUEUE_SET:
            named = by_name.get(finding.entity)
            report(finding.message, named.urn if named is not None else secondary.urn)


def validate_paired_regions_differ(args: StackValidationArgs, report: ReportViolation) -> None:
    stack = StackView(args.resources)
    primary, secondary = stack.roles.get(contract.ROLE_PRIMARY), stack.roles.get(contract.ROLE_SECONDARY)
    if primary is None or secondary is None:
        return
    findings = rules.check_pair(stack.props[primary.urn], stack.props[secondary.urn], [])
    _report(findings, report, secondary.urn, rule=rules.PAIRED_REGIONS_DIFFER)


def validate_standard_partitioned_entity_limit(args: StackValidationArgs, report: ReportViolation) -> None:
    stack = StackView(args.resources)
    members: dict[str, list[dict[str, Any]]] = {ns.urn: [] for ns in stack.namespaces}
    for resource in stack.entities:
        ns = stack.namespace_of(resource)
        if ns is not None:
            members[ns.urn].append(stack.props[resource.urn])
    for queue in stack.backlog_queues:
        ns = stack.backlog_namespace(queue)
        if ns is not None:
            members[ns.urn].append(stack.props[queue.urn])
    for ns in stack.namespaces:
        findings = rules.check_partitioned_entity_limit(stack.props[ns.urn], members[ns.urn])
        _report(findings, report, ns.urn, rule=rules.STANDARD_PARTITIONED_ENTITY_LIMIT)


def validate_entity_size_allowed_for_tier(args: StackValidationArgs, report: ReportViolation) -> None:
    stack = StackView(args.resources)
    for resource in [*stack.entities, *stack.backlog_queues]:
        ns = stack.backlog_namespace(resource) if resource in stack.backlog_queues else stack.namespace_of(resource)
        if ns is None:
            continue
        findings = rules.check_entity_size(stack.name_of(resource), stack.props[resource.urn], stack.props[ns.urn])
        _report(findings, report, resource.urn, rule=rules.ENTITY_SIZE_ALLOWED_FOR_TIER)


#: paired-entities-duplicate-detection's policy settings: the stack's `pairedbus:maxOutage` and the
#: entities opted out of pairing (`paired: false`). Neither is a resource input (ARM queues and
#: topics carry no tags), so `pairedbus plan` passes both from the stack config.
MAX_OUTAGE_SETTING = "maxOutage"
UNPAIRED_SETTING = "unpaired"


def validate_paired_entities_duplicate_detection(args: StackValidationArgs, report: ReportViolation) -> None:
    """Paired senders write to the primary's queues and topics (never to backlog queues, whose
    settings are fixed by the table); each needs duplicate detection over at least maxOutage."""
    stack = StackView(args.resources)
    primary = stack.roles.get(contract.ROLE_PRIMARY)
    if primary is None:
        return
    config = args.get_config()
    max_outage = config.get(MAX_OUTAGE_SETTING) or contract.DEFAULT_MAX_OUTAGE
    unpaired = {str(name).lower() for name in config.get(UNPAIRED_SETTING) or ()}
    for resource in stack.entities:
        if stack.namespace_of(resource) is not primary:
            continue
        name = stack.name_of(resource)
        findings = rules.check_duplicate_detection(
            name,
            stack.props[resource.urn],
            stack.props[primary.urn],
            max_outage=max_outage,
            paired=name.lower() not in unpaired,
        )
        _report(findings, report, resource.urn, rule=rules.PAIRED_ENTITIES_DUPLICATE_DETECTION)


#: The diagnostic-settings resource types whose target is a namespace (azure-native v3 puts them in `monitor`).
DIAGNOSTIC_SETTING_TYPES = ("azure-native:monitor:DiagnosticSetting", "azure-native:insights:DiagnosticSetting")


def _targets(stack: StackView, setting: PolicyResource, namespace: PolicyResource) -> bool:
    """Whether a diagnostic setting is on this namespace: by its `resourceUri` when known (ARM ids compare
    without regard to case), else by what that input (or the setting) depends on."""
    uri = stack.props[setting.urn].get("resourceUri")
    if isinstance(uri, str):
        return uri.lower().endswith(
            f"/providers/microsoft.servicebus/namespaces/{stack.namespace_label(namespace).lower()}"
        )
    depends = setting.property_dependencies.get("resourceUri") or setting.dependencies
    return any(resource is namespace or resource.urn == namespace.urn for resource in depends)


def validate_production_namespace_diagnostics(args: StackValidationArgs, report: ReportViolation) -> None:
    """A production namespace (protected, as `production: true` makes it) has a diagnostic setting sending its
    resource logs somewhere."""
    stack = StackView(args.resources)
    settings_ = [r for r in stack.resources if r.resource_type in DIAGNOSTIC_SETTING_TYPES]
    for namespace in stack.namespaces:
        if not namespace.opts.protect:
            continue
        on_it = [stack.props[s.urn] for s in settings_ if _targets(stack, s, namespace)]
        findings = rules.check_production_diagnostics(stack.props[namespace.urn], on_it)
        _report(findings, report, namespace.urn, rule=rules.PRODUCTION_NAMESPACE_DIAGNOSTICS)


# --- The pack -------------------------------------------------------------------------------

_MANDATORY = EnforcementLevel.MANDATORY

local_auth_disabled = ResourceValidationPolicy(
    name=rules.LOCAL_AUTH_DISABLED,
    description=(
        "Service Bus namespaces disable local (SAS key) authentication, so only Entra ID identities "
        "send and receive. Mirrors the Azure Policy built-in 'Azure Service Bus namespaces should have "
        "local authentication methods disabled' and PSRule Azure.ServiceBus.DisableLocalAuth."
    ),
    validate=validate_local_auth_disabled,
    enforcement_level=_MANDATORY,
    severity=Severity.HIGH,
    remediation_steps="Set disableLocalAuth: true on the namespace (the `backlogAuth: sas` fallback needs this policy set to advisory in the stack's policy config).",
)

minimum_tls = ResourceValidationPolicy(
    name=rules.MINIMUM_TLS,
    description=(
        f"Service Bus namespaces set minimumTlsVersion to {contract.MINIMUM_TLS_VERSION} or later. Mirrors "
        "PSRule Azure.ServiceBus.MinTLS and the Azure Policy audit of "
        "Microsoft.ServiceBus/namespaces/minimumTlsVersion from the Service Bus TLS documentation."
    ),
    validate=validate_minimum_tls,
    enforcement_level=_MANDATORY,
    severity=Severity.HIGH,
)

backlog_queue_settings = ResourceValidationPolicy(
    name=rules.BACKLOG_QUEUE_SETTINGS,
    description=(
        f"A backlog queue (<primary>/{contract.BACKLOG_QUEUE_SEGMENT}/<n>, as an azure-native Queue or the "
        "backlog dynamic resource) carries every property of the paired-namespace backlog table exactly "
        "and nothing else beyond its name, namespace and partitioning. No Azure Policy built-in or PSRule "
        "rule covers it: it mirrors the paired-namespaces backlog queue table."
    ),
    validate=validate_backlog_queue_settings,
    enforcement_level=_MANDATORY,
    severity=Severity.HIGH,
)

premium_entities_partitioned = StackValidationPolicy(
    name=rules.PREMIUM_ENTITIES_PARTITIONED,
    description=(
        "Every queue and topic in a Premium namespace, backlog queues included, is partitioned: the "
        f"namespace has premiumMessagingPartitions >= {contract.MIN_PREMIUM_PARTITIONS_FOR_ENTITIES} and the "
        "entity enablePartitioning: true (it can only be set at creation). No Azure Policy built-in or "
        "PSRule rule covers it: it mirrors the Service Bus partitioning documentation for Premium."
    ),
    validate=validate_premium_entities_partitioned,
    enforcement_level=_MANDATORY,
    severity=Severity.HIGH,
)

backlog_queue_set = StackValidationPolicy(
    name=rules.BACKLOG_QUEUE_SET,
    description=(
        "The stack half of backlog-queue-settings: no backlog index below backlogQueueCount is missing or "
        "repeated, all live in the secondary namespace, and their prefix is the primary namespace's name. "
        "Queues beyond the count are explicitly allowed extras and pass. Mirrors the paired-namespaces "
        "backlog queue table; no built-in covers it."
    ),
    validate=validate_backlog_queue_set,
    config_schema=PolicyConfigSchema(
        properties={
            contract.BACKLOG_QUEUE_COUNT_KEY: {
                "type": "integer",
                "minimum": contract.MIN_BACKLOG_QUEUE_COUNT,
                "maximum": contract.MAX_BACKLOG_QUEUE_COUNT,
            }
        },
    ),
    enforcement_level=_MANDATORY,
    severity=Severity.HIGH,
)

paired_regions_differ = StackValidationPolicy(
    name=rules.PAIRED_REGIONS_DIFFER,
    description=(
        "The primary and secondary namespaces of a pair are in different regions, so one regional outage "
        "cannot take both. No Azure Policy built-in or PSRule rule covers it; it mirrors the Service Bus "
        "geo-disaster recovery guidance that a secondary namespace sits in another region."
    ),
    validate=validate_paired_regions_differ,
    enforcement_level=_MANDATORY,
    severity=Severity.MEDIUM,
)

standard_partitioned_entity_limit = StackValidationPolicy(
    name=rules.STANDARD_PARTITIONED_ENTITY_LIMIT,
    description=(
        f"A Standard namespace holds at most {contract.MAX_PARTITIONED_ENTITIES_PER_STANDARD_NAMESPACE} "
        "partitioned queues and topics (backlog queues count; entities are partitioned by default). Mirrors "
        "the Service Bus quota; no Azure Policy built-in or PSRule rule checks it before deployment."
    ),
    validate=validate_standard_partitioned_entity_limit,
    enforcement_level=_MANDATORY,
    severity=Severity.MEDIUM,
)

entity_size_allowed_for_tier = StackValidationPolicy(
    name=rules.ENTITY_SIZE_ALLOWED_FOR_TIER,
    description=(
        "maxSizeInMegabytes is a size the namespace tier offers (Standard 1-5 GB, Premium 1-5, 10, 20, 40 "
        "or 80 GB). Mirrors the Service Bus quotas; no Azure Policy built-in or PSRule rule checks it."
    ),
    validate=validate_entity_size_allowed_for_tier,
    enforcement_level=_MANDATORY,
    severity=Severity.MEDIUM,
)

paired_entities_duplicate_detection = StackValidationPolicy(
    name=rules.PAIRED_ENTITIES_DUPLICATE_DETECTION,
    description=(
        "Queues and topics of the primary, which paired senders write to, have requiresDuplicateDetection "
        "on with a duplicateDetectionHistoryTimeWindow of at least the stack's maxOutage (default PT1H): a "
        "send that timed out after the primary stored it is parked too, and a syphon move repeated after a "
        "failed complete arrives again, up to an outage later; only detection by MessageId removes the copy. "
        "Entities opted out of pairing (paired: false, the 'unpaired' setting) are exempt. No Azure Policy "
        "built-in or PSRule rule covers it; it follows the Service Bus duplicate detection guidance."
    ),
    validate=validate_paired_entities_duplicate_detection,
    enforcement_level=_MANDATORY,
    severity=Severity.HIGH,
    config_schema=PolicyConfigSchema(
        properties={
            MAX_OUTAGE_SETTING: {"type": "string", "pattern": "^P"},
            UNPAIRED_SETTING: {"type": "array", "items": {"type": "string"}},
        },
    ),
)

production_namespace_diagnostics = StackValidationPolicy(
    name=rules.PRODUCTION_NAMESPACE_DIAGNOSTICS,
    description=(
        "A production Service Bus namespace (one the stack protects, as production: true does) has a diagnostic "
        "setting that sends its resource logs (OperationalLogs, RuntimeAuditLogs, VNetAndIPFilteringLogs, ...) to "
        "a destination, so changes and access leave a trail. Advisory: logs may be collected another way (an Azure "
        "Policy deployIfNotExists). Mirrors PSRule Azure.ServiceBus.AuditLogs, the Azure Policy built-in 'Resource "
        "logs in Service Bus should be enabled' and AVM's avm/res/service-bus/namespace diagnosticSettings."
    ),
    validate=validate_production_namespace_diagnostics,
    enforcement_level=EnforcementLevel.ADVISORY,
    severity=Severity.MEDIUM,
    remediation_steps="Set pairedbus:diagnostics (e.g. `logs: [allLogs]`) in the stack config.",
)

POLICIES: list[ResourceValidationPolicy | StackValidationPolicy] = [
    local_auth_disabled,
    minimum_tls,
    backlog_queue_settings,
    premium_entities_partitioned,
    backlog_queue_set,
    paired_regions_differ,
    standard_partitioned_entity_limit,
    entity_size_allowed_for_tier,
    paired_entities_duplicate_detection,
    production_namespace_diagnostics,
]
