"""The native stack's Prometheus (Debian's package): what it scrapes, and a
configuration Prometheus's own ``promtool`` accepts with LGOS's alert rules."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from lgos_stack.services import StackOptions, plan_stack

REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    # `just up` runs from the repository: the alert rules are found there.
    monkeypatch.chdir(REPO_ROOT)


def _prometheus(tmp_path: Path, **options: object) -> dict[str, object] | None:
    plan = plan_stack(StackOptions(state_dir=tmp_path, **options), environ={})
    found = [s for s in plan.services if s.name == "Prometheus"]
    if not found:
        return None
    [service] = found
    config = next(a for a in service.argv if a.startswith("--config.file="))
    path = Path(config.split("=", 1)[1])
    loaded: dict[str, object] = json.loads(path.read_text())
    loaded["_path"] = str(path)
    loaded["_argv"] = list(service.argv)
    return loaded


def test_prometheus_scrapes_the_api_the_worker_and_litellm_with_lgos_alerts(
    tmp_path: Path, in_repo: None
) -> None:
    if shutil.which("prometheus") is None:
        pytest.fail("prometheus is missing: run scripts/install-prometheus.sh")
    config = _prometheus(tmp_path, port=8100 + 7, worker_health_port=8013)
    assert config is not None
    jobs = {
        job["job_name"]: job["static_configs"][0]["targets"]  # type: ignore[index]
        for job in config["scrape_configs"]  # type: ignore[attr-defined]
    }
    assert jobs == {
        "lgos-api": ["127.0.0.1:8107"],
        "lgos-worker": ["127.0.0.1:8013"],
        "litellm": ["127.0.0.1:4000"],
    }
    litellm = next(
        job
        for job in config["scrape_configs"]  # type: ignore[attr-defined]
        if job["job_name"] == "litellm"
    )
    # LiteLLM's metrics are behind its master key: Prometheus reads it from an
    # owner-only file, and the configuration holds only the file's name.
    assert litellm["metrics_path"] == "/metrics/"
    token = Path(litellm["authorization"]["credentials_file"])
    assert (
        token.read_text() == (tmp_path / "litellm" / "master-key").read_text().strip()
    )
    assert token.stat().st_mode & 0o077 == 0
    assert token.read_text() not in Path(str(config["_path"])).read_text()
    assert config["rule_files"] == [str(REPO_ROOT / "deploy/prometheus/alerts.yml")]
    assert "--web.listen-address=127.0.0.1:9090" in config["_argv"]  # type: ignore[operator]
    checked = subprocess.run(
        ["promtool", "check", "config", str(config["_path"])],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "7 rules found" in checked.stdout + checked.stderr


def test_the_worker_serves_its_metrics_where_prometheus_looks(tmp_path: Path) -> None:
    plan = plan_stack(StackOptions(state_dir=tmp_path, worker_health_port=8013), {})
    worker = next(s for s in plan.services if s.name == "background worker")
    assert worker.env["LGOS_WORKER_HEALTH_PORT"] == "8013"


def test_prometheus_can_be_left_out(tmp_path: Path) -> None:
    plan = plan_stack(
        StackOptions(state_dir=tmp_path, without=frozenset({"prometheus"})), {}
    )
    assert "Prometheus" not in {s.name for s in plan.services}
    assert "Prometheus left out (--without)" in plan.notes
