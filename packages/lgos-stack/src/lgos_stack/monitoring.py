"""Prometheus in the native stack: Debian's ``prometheus`` package (installed
by ``scripts/install-prometheus.sh``), scraping the demo API and the
background worker's health port.

Grafana and its LGOS dashboard run only in the container stack
(``compose/``); natively, Prometheus's own UI answers queries and shows the
alert rules of ``deploy/prometheus/alerts.yml``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from lgos_stack.net import LOOPBACK
from lgos_stack.supervisor import Service

DEFAULT_PROMETHEUS_PORT = 9090
DEFAULT_WORKER_HEALTH_PORT = 8003
"""Where the background worker serves ``/health/*`` and ``/metrics``."""
SCRAPE_INTERVAL = "15s"
ALERT_RULES = Path("deploy") / "prometheus" / "alerts.yml"
"""The repository's alert rules, relative to where ``just up`` runs."""


def prometheus_binary() -> str | None:
    return shutil.which("prometheus")


def scrape_config(
    targets: dict[str, str], rules: Path | None = None
) -> dict[str, object]:
    """A Prometheus configuration scraping ``/metrics`` of each job's
    ``host:port``; ``rules``: an alert rules file to load."""
    config: dict[str, object] = {
        "global": {
            "scrape_interval": SCRAPE_INTERVAL,
            "evaluation_interval": SCRAPE_INTERVAL,
        },
        "scrape_configs": [
            {"job_name": job, "static_configs": [{"targets": [target]}]}
            for job, target in targets.items()
        ],
    }
    if rules is not None:
        config["rule_files"] = [str(rules)]
    return config


def prometheus_service(
    state_dir: Path,
    port: int,
    targets: dict[str, str],
    binary: str,
    after: tuple[str, ...] = (),
) -> Service:
    """Prometheus keeping its data in ``state_dir/prometheus``; its
    configuration is written there now."""
    home = (state_dir / "prometheus").resolve()
    (home / "data").mkdir(parents=True, exist_ok=True)
    rules = ALERT_RULES.resolve() if ALERT_RULES.is_file() else None
    config = home / "prometheus.yml"
    # JSON is YAML: Prometheus reads it as its configuration.
    config.write_text(json.dumps(scrape_config(targets, rules), indent=2))
    base = f"http://{LOOPBACK}:{port}"
    return Service(
        name="Prometheus",
        argv=[
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={home / 'data'}",
            "--storage.tsdb.retention.time=7d",
            f"--web.listen-address={LOOPBACK}:{port}",
        ],
        port=port,
        url=base,
        health_url=f"{base}/-/ready",
        after=after,
    )
