"""Writes the sample estate under samples/estate/{inventory,metrics} (deterministic).

Two pairs of namespaces in one subscription:

- contoso-orders (Standard, West Europe) paired with contoso-orders-dr (Standard, North Europe),
  three backlog queues; its backlog queue 1 has drifted (lock duration and
  max delivery count changed by hand). The primary is down 09:00-12:59 UTC on 2026-11-18: its
  senders park messages in the backlog queues and the syphon drains them at 13:00.
- fabrikam-billing (Premium, 2 partitions) paired with fabrikam-billing-dr (Premium), two backlog
  queues listed the way `az servicebus queue list` prints them (flattened, JSON array, '~' in the
  names); the topic `ledger` is a non-partitioned Premium entity.

Each namespace carries the tags the component sets: `pairedbus-pair` and `pairedbus-role`, and on
the secondary `pairedbus-backlog-queue-count`, the count the pair was deployed with (3 and 2), so
the audit judges each backlog set against its configured count as the policy pack and `drift` do.

Plus one malformed inventory line and one metric point with an impossible time, for quarantine.
Metrics are hourly (PT1H) to keep the sample small.

`costs/` holds what Cost Management would export for those days in FOCUS 1.0: each namespace's
daily charge (fabrikam-billing-dr's messaging unit covered by a reservation: billed 0, effective
cost amortised at 20 % off), and each pair's syphon (a container app at idle rates, a Log
Analytics workspace) tagged with its pair. Run: python samples/estate/generate.py
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pairedbus import contract

HERE = Path(__file__).parent
SUBSCRIPTION = "5f1c7a52-3b7e-4d0a-9c61-2a8e4b6d9f10"
GROUP = "rg-messaging"
DAYS = [datetime(2026, 11, 16, tzinfo=UTC) + timedelta(days=d) for d in range(4)]
OUTAGE_DAY, OUTAGE_HOURS, DRAIN_HOUR = DAYS[2], range(9, 13), 13


def ns_id(name: str) -> str:
    return f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{GROUP}/providers/Microsoft.ServiceBus/namespaces/{name}"


def namespace(name: str, location: str, sku: str, partitions: int = 1, *, tags: dict[str, str]) -> dict:
    props = {
        "disableLocalAuth": True,
        "minimumTlsVersion": contract.MINIMUM_TLS_VERSION,
        "serviceBusEndpoint": f"https://{contract.service_bus_fqdn(name)}:443/",
        "status": "Active",
        "zoneRedundant": sku == contract.SKU_PREMIUM,
    }
    if sku == contract.SKU_PREMIUM:
        props["premiumMessagingPartitions"] = partitions
    return {
        "id": ns_id(name),
        "name": name,
        "type": "Microsoft.ServiceBus/Namespaces",
        "location": location,
        "sku": {"name": sku, "tier": sku, **({"capacity": 1} if sku == contract.SKU_PREMIUM else {})},
        "properties": props,
        "tags": tags,
    }


def pair_tags(pair: str, role: str, backlog_queue_count: int | None = None) -> dict[str, str]:
    """The tags the component puts on a pair's namespaces (contract.TAG_*)."""
    tags = {contract.TAG_PAIR: pair, contract.TAG_ROLE: role}
    if backlog_queue_count is not None:
        tags[contract.TAG_BACKLOG_QUEUE_COUNT] = str(backlog_queue_count)
    return tags


def queue(ns: str, location: str, name: str, **props: object) -> dict:
    base = {
        "maxSizeInMegabytes": 1024,
        "maxDeliveryCount": 10,
        "lockDuration": "PT1M",
        "defaultMessageTimeToLive": contract.TIMESPAN_MAX_ISO,
        "autoDeleteOnIdle": contract.TIMESPAN_MAX_ISO,
        "deadLetteringOnMessageExpiration": False,
        "enableBatchedOperations": True,
        "enablePartitioning": False,
        "requiresSession": False,
        "requiresDuplicateDetection": False,
        "status": "Active",
    }
    return {
        "id": f"{ns_id(ns)}/queues/{name.replace('/', '~')}",
        "name": name,
        "type": "Microsoft.ServiceBus/Namespaces/Queues",
        "location": location,
        "properties": {**base, **props},
    }


def backlog(ns: str, location: str, primary: str, index: int, partitioned: bool, partitions: int, **drift: object):
    props = dict(contract.BACKLOG_QUEUE_PROPERTIES)
    if partitioned:
        props["enablePartitioning"] = True
        # What the service reads back for a partitioned entity: its size times the fragments.
        props["maxSizeInMegabytes"] = props["maxSizeInMegabytes"] * partitions
    props.update(drift)
    return queue(ns, location, contract.backlog_queue_name(primary, index), status="Active", **props) | {
        "properties": {**props, "status": "Active"}
    }


def topic(ns: str, location: str, name: str, partitioned: bool) -> dict:
    return {
        "id": f"{ns_id(ns)}/topics/{name}",
        "name": name,
        "type": "Microsoft.ServiceBus/Namespaces/Topics",
        "location": location,
        "properties": {
            "maxSizeInMegabytes": 1024,
            "defaultMessageTimeToLive": contract.TIMESPAN_MAX_ISO,
            "enableBatchedOperations": True,
            "enablePartitioning": partitioned,
            "requiresDuplicateDetection": False,
            "status": "Active",
        },
    }


def subscription(ns: str, location: str, topic_name: str, name: str) -> dict:
    return {
        "id": f"{ns_id(ns)}/topics/{topic_name}/subscriptions/{name}",
        "name": name,
        "type": "Microsoft.ServiceBus/Namespaces/Topics/Subscriptions",
        "location": location,
        "properties": {"lockDuration": "PT1M", "maxDeliveryCount": 10, "status": "Active"},
    }


def flatten(record: dict) -> dict:
    """The shape `az servicebus queue list` prints: properties at the top level, resourceGroup."""
    flat = {k: v for k, v in record.items() if k != "properties"}
    flat["name"] = flat["name"].replace("/", "~")
    return {**flat, **record["properties"], "resourceGroup": GROUP}


def inventory() -> None:
    out = HERE / "inventory"
    out.mkdir(exist_ok=True)
    std = contract.PARTITIONS_PER_ENTITY[contract.SKU_STANDARD]
    arm = [
        namespace(
            "contoso-orders",
            "westeurope",
            contract.SKU_STANDARD,
            tags=pair_tags("contoso-orders", contract.ROLE_PRIMARY),
        ),
        queue("contoso-orders", "westeurope", "orders"),
        queue("contoso-orders", "westeurope", "payments"),
        topic("contoso-orders", "westeurope", "events", partitioned=False),
        subscription("contoso-orders", "westeurope", "events", "audit"),
        namespace(
            "contoso-orders-dr",
            "northeurope",
            contract.SKU_STANDARD,
            tags=pair_tags("contoso-orders", contract.ROLE_SECONDARY, BACKLOGS["contoso-orders-dr"][1]),
        ),
        backlog("contoso-orders-dr", "northeurope", "contoso-orders", 0, True, std),
        backlog(
            "contoso-orders-dr",
            "northeurope",
            "contoso-orders",
            1,
            True,
            std,
            lockDuration="PT30S",
            maxDeliveryCount=10,
        ),
        backlog("contoso-orders-dr", "northeurope", "contoso-orders", 2, False, std),
        namespace(
            "fabrikam-billing",
            "westeurope",
            contract.SKU_PREMIUM,
            partitions=2,
            tags=pair_tags("fabrikam-billing", contract.ROLE_PRIMARY),
        ),
        queue("fabrikam-billing", "westeurope", "invoices", enablePartitioning=True),
        topic("fabrikam-billing", "westeurope", "ledger", partitioned=False),
        namespace(
            "fabrikam-billing-dr",
            "northeurope",
            contract.SKU_PREMIUM,
            partitions=2,
            tags=pair_tags("fabrikam-billing", contract.ROLE_SECONDARY, BACKLOGS["fabrikam-billing-dr"][1]),
        ),
    ]
    lines = [json.dumps(r, sort_keys=True) for r in arm]
    # A line cut short by an interrupted export: quarantined, never dropped.
    lines.insert(6, lines[6][: len(lines[6]) // 2])
    (out / "estate.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    az = [flatten(backlog("fabrikam-billing-dr", "northeurope", "fabrikam-billing", i, True, 1)) for i in range(2)]
    (out / "fabrikam-billing-dr.az-queue-list.json").write_text(json.dumps(az, indent=2) + "\n", encoding="utf-8")


ENTITIES = {
    # namespace: {entity: messages per hour}
    "contoso-orders": {"orders": 1200, "payments": 300, "events": 600},
    "fabrikam-billing": {"invoices": 400, "ledger": 800},
}
BACKLOGS = {"contoso-orders-dr": ("contoso-orders", 3), "fabrikam-billing-dr": ("fabrikam-billing", 2)}


def series(entity: str, values: list[tuple[datetime, float]]) -> dict:
    return {
        "metadatavalues": [{"name": {"value": "entityname", "localizedValue": "entityname"}, "value": entity}],
        "data": [{"timeStamp": t.strftime("%Y-%m-%dT%H:%M:%SZ"), "total": v} for t, v in values],
    }


def document(ns: str, day: datetime, metrics: dict[str, dict[str, list[tuple[datetime, float]]]]) -> dict:
    end = day + timedelta(days=1)
    return {
        "cost": 0,
        "timespan": f"{day:%Y-%m-%dT%H:%M:%SZ}/{end:%Y-%m-%dT%H:%M:%SZ}",
        "interval": "PT1H",
        "namespace": "Microsoft.ServiceBus/namespaces",
        "resourceregion": "westeurope" if not ns.endswith("-dr") else "northeurope",
        "value": [
            {
                "id": f"{ns_id(ns)}/providers/Microsoft.Insights/metrics/{metric}",
                "type": "Microsoft.Insights/metrics",
                "name": {"value": metric, "localizedValue": metric},
                "unit": "Count",
                "errorCode": "Success",
                "timeseries": [series(e, v) for e, v in sorted(per_entity.items())],
            }
            for metric, per_entity in metrics.items()
        ],
    }


def metrics() -> None:
    out = HERE / "metrics"
    out.mkdir(exist_ok=True)
    for day in DAYS:
        hours = [day + timedelta(hours=h) for h in range(24)]
        outage = day == OUTAGE_DAY
        parked_total = sum(ENTITIES["contoso-orders"].values()) * len(OUTAGE_HOURS)
        for ns, entities in ENTITIES.items():
            m: dict[str, dict[str, list]] = {"IncomingMessages": {}, "OutgoingMessages": {}, "IncomingRequests": {}}
            for entity, rate in entities.items():
                down = outage and ns == "contoso-orders"
                share = rate / sum(entities.values())
                incoming = [
                    (
                        t,
                        0.0
                        if down and t.hour in OUTAGE_HOURS
                        else rate + (parked_total * share if down and t.hour == DRAIN_HOUR else 0.0),
                    )
                    for t in hours
                ]
                m["IncomingMessages"][entity] = incoming
                m["OutgoingMessages"][entity] = incoming
                # A send and a receive per message, plus a receiver's idle polls.
                m["IncomingRequests"][entity] = [(t, 2 * v + 60) for t, v in incoming]
            doc = document(ns, day, m)
            if ns == "fabrikam-billing" and day == DAYS[1]:
                doc["value"][0]["timeseries"][0]["data"][5]["timeStamp"] = "2026-11-17T25:00:00Z"
            (out / f"{ns}.counters.{day:%Y-%m-%d}.json").write_text(
                json.dumps(doc, separators=(",", ":")) + "\n", "utf-8"
            )
        for ns, (primary, count) in BACKLOGS.items():
            m = {"IncomingMessages": {}, "OutgoingMessages": {}, "IncomingRequests": {}}
            for i in range(count):
                name = contract.backlog_queue_name(primary, i)
                parked = outage and primary == "contoso-orders"
                per_queue = sum(ENTITIES[primary].values()) / count
                incoming = [(t, per_queue if parked and t.hour in OUTAGE_HOURS else 0.0) for t in hours]
                outgoing = [
                    (t, per_queue * len(OUTAGE_HOURS) if parked and t.hour == DRAIN_HOUR else 0.0) for t in hours
                ]
                m["IncomingMessages"][name] = incoming
                m["OutgoingMessages"][name] = outgoing
                syphon = contract.SYPHON_RECEIVES_PER_HOUR_PER_QUEUE
                m["IncomingRequests"][name] = [
                    (t, a + b + syphon) for (t, a), (_, b) in zip(incoming, outgoing, strict=True)
                ]
            doc = document(ns, day, m)
            (out / f"{ns}.counters.{day:%Y-%m-%d}.json").write_text(
                json.dumps(doc, separators=(",", ":")) + "\n", "utf-8"
            )


FOCUS_COLUMNS = (
    "BilledCost",
    "BillingAccountId",
    "BillingCurrency",
    "BillingPeriodEnd",
    "BillingPeriodStart",
    "ChargeCategory",
    "ChargeDescription",
    "ChargePeriodEnd",
    "ChargePeriodStart",
    "EffectiveCost",
    "ListCost",
    "ProviderName",
    "PublisherName",
    "InvoiceIssuerName",
    "RegionName",
    "ResourceId",
    "ResourceName",
    "ResourceType",
    "ServiceCategory",
    "ServiceName",
    "SubAccountId",
    "SubAccountName",
    "Tags",
)
#: Daily charges: (resource id, name, type, region, service, category, list, effective, billed, tags)
BASE_STANDARD = round(0.0135 * 24, 6)
BASE_PREMIUM = round(0.928 * 24, 6)
#: Container Apps idle rates: 0.5 vCPU and 1 GiB at 0.000003 USD a second each.
SYPHON_IDLE = round(86400 * (0.5 * 0.000003 + 1.0 * 0.000003), 6)
LOGS = round(0.005 * 2.30, 6)  # 5 MB a day


def charges() -> list[tuple]:
    rows = []
    for name, region, base, effective, billed in (
        ("contoso-orders", "westeurope", BASE_STANDARD, BASE_STANDARD, BASE_STANDARD),
        ("contoso-orders-dr", "northeurope", BASE_STANDARD, BASE_STANDARD, BASE_STANDARD),
        ("fabrikam-billing", "westeurope", BASE_PREMIUM, BASE_PREMIUM, BASE_PREMIUM),
        ("fabrikam-billing-dr", "northeurope", BASE_PREMIUM, round(BASE_PREMIUM * 0.8, 6), 0.0),
    ):
        rows.append(
            (
                ns_id(name).lower(),
                name,
                "microsoft.servicebus/namespaces",
                region,
                "Service Bus",
                "Integration",
                base,
                effective,
                billed,
                {},
            )
        )
    for pair in ("contoso-orders", "fabrikam-billing"):
        tags = {contract.TAG_PAIR: pair}
        app = (
            f"/subscriptions/{SUBSCRIPTION}/resourcegroups/{GROUP}/providers/microsoft.app/containerapps/syphon-{pair}"
        )
        logs = f"/subscriptions/{SUBSCRIPTION}/resourcegroups/{GROUP}/providers/microsoft.operationalinsights/workspaces/log-{pair}"
        rows.append(
            (
                app,
                f"syphon-{pair}",
                "microsoft.app/containerapps",
                "westeurope",
                "Azure Container Apps",
                "Compute",
                SYPHON_IDLE,
                SYPHON_IDLE,
                SYPHON_IDLE,
                tags,
            )
        )
        rows.append(
            (
                logs,
                f"log-{pair}",
                "microsoft.operationalinsights/workspaces",
                "westeurope",
                "Log Analytics",
                "Management and Governance",
                LOGS,
                LOGS,
                LOGS,
                tags,
            )
        )
    return rows


def costs() -> None:
    import csv

    out = HERE / "costs"
    out.mkdir(exist_ok=True)
    with (out / "focus-2026-11.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(FOCUS_COLUMNS)
        for day in DAYS:
            end = day + timedelta(days=1)
            for rid, name, rtype, region, service, category, list_cost, effective, billed, tags in charges():
                writer.writerow(
                    (
                        billed,
                        "billing-account-1",
                        "USD",
                        "2026-12-01T00:00:00Z",
                        "2026-11-01T00:00:00Z",
                        "Usage",
                        f"{service} {name}",
                        f"{end:%Y-%m-%dT%H:%M:%SZ}",
                        f"{day:%Y-%m-%dT%H:%M:%SZ}",
                        effective,
                        list_cost,
                        "Microsoft",
                        "Microsoft",
                        "Microsoft",
                        region,
                        rid,
                        name,
                        rtype,
                        category,
                        service,
                        SUBSCRIPTION,
                        "messaging",
                        json.dumps(tags, sort_keys=True),
                    )
                )


if __name__ == "__main__":
    inventory()
    metrics()
    costs()
