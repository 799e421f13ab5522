"""The getting-started page's `lgos serve` command serves the sample registry."""

from __future__ import annotations

import os
import shutil
import signal

import httpx
from conftest import SAMPLES
from lgos_testkit import free_port, running


def test_lgos_serve_runs_the_registry_named_by_lgos_registry(tmp_path):
    port = free_port()
    lgos = shutil.which("lgos")
    assert lgos is not None
    base = f"http://127.0.0.1:{port}/v1"
    with running(
        [lgos, "serve", "--host", "127.0.0.1", "--port", str(port)],
        log=tmp_path / "lgos.log",
        name="lgos serve",
        env={
            **os.environ,
            "LGOS_REGISTRY": "first_app:registry",
            "PYTHONPATH": str(SAMPLES),
            "LGOS_LOG_LEVEL": "WARNING",
        },
        health_url=f"{base}/health",
        stop_timeout=15,
    ) as server:
        models = httpx.get(f"{base}/models", timeout=5).json()

    assert [model["id"] for model in models["data"]] == ["echo"]
    # It stopped on SIGTERM (not killed after the stop timeout).
    assert server.process.returncode in (0, -signal.SIGTERM)
