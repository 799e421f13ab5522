"""The dashboard and alert rules in deploy/: every PromQL expression parses
(Prometheus's own ``promtool`` from Debian's package, and a PromQL parser
for the metric names) and names only metrics LGOS exposes."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import promql_parser
import pytest
import yaml
from deploy_support import REPO_ROOT
from langgraph_openai_serve.observability import http, queue, runs  # noqa: F401
from langgraph_openai_serve.observability.queue import QueueStats, queue_families
from prometheus_client import REGISTRY

ALERTS = REPO_ROOT / "deploy" / "prometheus" / "alerts.yml"
DASHBOARD = REPO_ROOT / "deploy" / "grafana" / "lgos-dashboard.json"
GRAFANA_INTERVALS = {"$__rate_interval": "5m", "$__interval": "1m"}
PROMETHEUS_OWN = {"up"}
"""Series Prometheus makes itself for every target."""


def _exposed() -> set[str]:
    """Every series name LGOS's processes can expose: its own families, the
    queue's (read at scrape time) and the library's default collectors."""
    families = [*REGISTRY.collect(), *queue_families(QueueStats(0, 0, 0.0))]
    names = set()
    for family in families:
        suffixes = {
            "counter": ("_total",),
            "histogram": ("_bucket", "_count", "_sum"),
            "summary": ("_count", "_sum", ""),
        }.get(family.type, ("",))
        names.update(family.name + suffix for suffix in suffixes)
    return names


def _selectors(expr: str) -> Iterator[str]:
    found: list[str] = []

    def visit(node: Any) -> bool:
        if isinstance(node, promql_parser.VectorSelector):
            name = node.name or next(
                (m.value for m in node.matchers.matchers if m.name == "__name__"), ""
            )
            found.append(name)
        return True

    promql_parser.walk(promql_parser.parse(expr), visit)
    yield from found


def _alert_rules() -> list[dict[str, Any]]:
    groups = yaml.safe_load(ALERTS.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def _dashboard_queries() -> list[tuple[str, str]]:
    """(panel title, expression with Grafana's intervals filled in)."""
    dashboard = json.loads(DASHBOARD.read_text())
    queries = []
    for panel in dashboard["panels"]:
        for target in panel.get("targets", ()):
            expr = target["expr"]
            for variable, value in GRAFANA_INTERVALS.items():
                expr = expr.replace(variable, value)
            queries.append((panel["title"], expr))
    return queries


def _promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.fail("promtool is missing: run scripts/install-prometheus.sh")
    return found


def test_the_alert_rules_pass_promtool() -> None:
    result = subprocess.run(
        [_promtool(), "check", "rules", str(ALERTS)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_dashboard_query_passes_promtool(tmp_path: Path) -> None:
    # promtool checks expressions inside rule files: each query becomes one.
    rules = {
        "groups": [
            {
                "name": "dashboard",
                "rules": [
                    {"record": f"lgos:dashboard_query_{index}", "expr": expr}
                    for index, (_, expr) in enumerate(_dashboard_queries())
                ],
            }
        ]
    }
    path = tmp_path / "dashboard-rules.yml"
    path.write_text(yaml.safe_dump(rules))
    result = subprocess.run(
        [_promtool(), "check", "rules", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_expression_names_only_metrics_lgos_exposes() -> None:
    exposed = _exposed() | PROMETHEUS_OWN
    expressions = [(rule["alert"], rule["expr"]) for rule in _alert_rules()]
    expressions += _dashboard_queries()
    unknown = {
        (where, name)
        for where, expr in expressions
        for name in _selectors(expr)
        if name not in exposed
    }
    assert not unknown
    # The check itself sees names: a misspelt one is caught.
    assert "lgos_run_total" not in exposed
    assert list(_selectors("rate(lgos_run_total[5m])")) == ["lgos_run_total"]


def test_the_dashboard_shows_queue_waits_first_tokens_outcomes_and_streams() -> None:
    shown = {name for _, expr in _dashboard_queries() for name in _selectors(expr)}
    assert {
        "lgos_background_jobs",
        "lgos_background_oldest_ready_seconds",
        "lgos_background_queue_wait_seconds_bucket",
        "lgos_time_to_first_token_seconds_bucket",
        "lgos_runs_total",
        "lgos_streams_active",
    } <= shown


def test_every_alert_says_what_is_wrong() -> None:
    for rule in _alert_rules():
        assert rule["annotations"]["summary"], rule["alert"]
        assert rule["labels"]["severity"] in {"page", "warn"}, rule["alert"]
