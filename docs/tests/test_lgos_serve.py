"""The getting-started page's `lgos serve` command serves the sample registry."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

import httpx
from conftest import SAMPLES, free_port


def test_lgos_serve_runs_the_registry_named_by_lgos_registry():
    port = free_port()
    lgos = shutil.which("lgos")
    assert lgos is not None
    server = subprocess.Popen(
        [lgos, "serve", "--host", "127.0.0.1", "--port", str(port)],
        env={
            **os.environ,
            "LGOS_REGISTRY": "first_app:registry",
            "PYTHONPATH": str(SAMPLES),
            "LGOS_LOG_LEVEL": "WARNING",
        },
    )
    try:
        base = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + 30
        while True:
            assert server.poll() is None, "lgos serve exited during startup"
            assert time.monotonic() < deadline, "lgos serve did not start"
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        models = httpx.get(f"{base}/models", timeout=5).json()
    finally:
        server.send_signal(signal.SIGTERM)
        returncode = server.wait(timeout=15)

    assert [model["id"] for model in models["data"]] == ["echo"]
    assert returncode in (0, -signal.SIGTERM)  # it stopped on SIGTERM
