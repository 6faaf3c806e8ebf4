"""The example Grafana dashboard and Prometheus alert rules in docs/ parse, and name only
series the collector exports (a renamed metric must not leave a dashboard silently empty)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from monque_engine import Monque

DOCS = Path(__file__).resolve().parent.parent / "docs"


def exported(tmp_path: Path) -> set[str]:
    """Every sample name the collector can produce (families plus their suffixes)."""
    families = Monque(f"sqlite:///{tmp_path / 'jobs.db'}").metrics().describe()
    names: set[str] = set()
    for family in families:
        suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_sum", "_count"]}.get(family.type, [""])
        names.update(family.name + suffix for suffix in suffixes)
    return names


def referenced(expr: str) -> set[str]:
    return set(re.findall(r"\bmonque_[a-z_]+", expr))


def test_the_dashboard_parses_and_graphs_exported_series(tmp_path: Path) -> None:
    dashboard = json.loads((DOCS / "grafana-dashboard.json").read_text())
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    assert len(exprs) >= 10
    known = exported(tmp_path)
    for expr in exprs:
        assert referenced(expr) and referenced(expr) <= known, expr
    assert {panel["id"] for panel in dashboard["panels"]} == set(range(1, len(dashboard["panels"]) + 1))


def test_the_three_alert_rules_parse_and_use_exported_series(tmp_path: Path) -> None:
    rules = yaml.safe_load((DOCS / "prometheus-alerts.yml").read_text())["groups"][0]["rules"]
    assert [rule["alert"] for rule in rules] == [
        "MonqueQueueHasNoConsumer",
        "MonqueQueueLatencyHigh",
        "MonqueFailureRateHigh",
    ]
    known = exported(tmp_path)
    for rule in rules:
        assert referenced(rule["expr"]) and referenced(rule["expr"]) <= known, rule["expr"]
        assert re.fullmatch(r"\d+[smh]", rule["for"])
        assert rule["labels"]["severity"] in {"warning", "critical"}
        assert rule["annotations"]["summary"]
