"""check_production_diagnostics: a production namespace needs a diagnostic setting that sends logs somewhere."""

from __future__ import annotations

from pairedbus.rules import ADVISORY, check_production_diagnostics

NAMESPACE = {"namespaceName": "contoso-prod-weu", "location": "westeurope"}
SETTING = {
    "workspaceId": "/subscriptions/x/.../workspaces/law",
    "logs": [{"categoryGroup": "allLogs", "enabled": True}],
}


def test_a_setting_with_logs_and_a_destination_passes() -> None:
    assert check_production_diagnostics(NAMESPACE, [SETTING]) == []
    assert check_production_diagnostics(NAMESPACE, [{**SETTING, "workspaceId": None}]) == []  # unknown in a preview


def test_none_at_all_is_one_advisory_finding_naming_the_namespace() -> None:
    (finding,) = check_production_diagnostics(NAMESPACE, [])
    assert (finding.rule, finding.severity, finding.entity) == (
        "production-namespace-diagnostics",
        ADVISORY,
        "contoso-prod-weu",
    )
    assert finding.message == (
        "production namespace contoso-prod-weu: no diagnostic settings (set pairedbus:diagnostics to send its "
        "resource logs to Log Analytics)"
    )


def test_metrics_only_or_no_destination_is_not_enough() -> None:
    metrics_only = {"workspaceId": SETTING["workspaceId"], "metrics": [{"category": "AllMetrics", "enabled": True}]}
    nowhere = {"logs": SETTING["logs"]}
    (finding,) = check_production_diagnostics(NAMESPACE, [metrics_only, nowhere])
    assert finding.actual == "2 without logs"
