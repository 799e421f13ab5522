"""Prometheus in the native stack: Debian's ``prometheus`` package (installed
by ``scripts/install-prometheus.sh``), scraping the demo API, the background
worker's health port and LiteLLM.

Grafana and its LGOS dashboard run only in the container stack
(``compose/``); natively, Prometheus's own UI answers queries and shows the
alert rules of ``deploy/prometheus/alerts.yml``.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lgos_stack.net import LOOPBACK
from lgos_stack.supervisor import Service

DEFAULT_PROMETHEUS_PORT = 9090
DEFAULT_WORKER_HEALTH_PORT = 8003
"""Where the background worker serves ``/health/*`` and ``/metrics``."""
SCRAPE_INTERVAL = "15s"
ALERT_RULES = Path("deploy") / "prometheus" / "alerts.yml"
"""The repository's alert rules, relative to where ``just up`` runs."""


@dataclass(frozen=True)
class ScrapeTarget:
    """One job's ``host:port`` and the path its metrics answer on."""

    address: str
    path: str = "/metrics"
    bearer_token: str | None = field(default=None, repr=False)
    """A key the target wants (LiteLLM's master key); Prometheus reads it from
    an owner-only file beside its configuration, never from the config."""


LITELLM_METRICS_PATH = "/metrics/"
"""LiteLLM mounts its metrics app at ``/metrics``; the mount answers
``/metrics/`` (the bare path is a redirect)."""


def prometheus_binary() -> str | None:
    return shutil.which("prometheus")


def scrape_config(
    targets: dict[str, ScrapeTarget],
    rules: Path | None = None,
    credentials: dict[str, Path] | None = None,
) -> dict[str, object]:
    """A Prometheus configuration scraping each job's target; ``rules``: an
    alert rules file to load; ``credentials``: each keyed job's token file."""
    credentials = credentials or {}
    config: dict[str, object] = {
        "global": {
            "scrape_interval": SCRAPE_INTERVAL,
            "evaluation_interval": SCRAPE_INTERVAL,
        },
        "scrape_configs": [
            _job(job, target, credentials.get(job)) for job, target in targets.items()
        ],
    }
    if rules is not None:
        config["rule_files"] = [str(rules)]
    return config


def _job(name: str, target: ScrapeTarget, token_file: Path | None) -> dict[str, Any]:
    job: dict[str, Any] = {
        "job_name": name,
        "metrics_path": target.path,
        "static_configs": [{"targets": [target.address]}],
    }
    if token_file is not None:
        job["authorization"] = {"type": "Bearer", "credentials_file": str(token_file)}
    return job


def _write_token(path: Path, token: str) -> Path:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(token)
    return path


def prometheus_service(
    state_dir: Path,
    port: int,
    targets: dict[str, ScrapeTarget],
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
    credentials = {
        job: _write_token(home / f"{job}.token", target.bearer_token)
        for job, target in targets.items()
        if target.bearer_token is not None
    }
    config.write_text(json.dumps(scrape_config(targets, rules, credentials), indent=2))
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
