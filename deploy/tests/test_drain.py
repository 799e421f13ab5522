"""A stopping API pod, timed with the manifest's own numbers: ``lgos serve``
started as the base runs it gets SIGTERM (what the kubelet sends once the
preStop sleep ends), turns not-ready at once while it still serves, and has
exited before the grace period would end in SIGKILL."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import httpx
from deploy_support import (
    Rendered,
    container,
    generated_secrets,
    local_command,
    plain_env,
    pod_spec,
)
from lgos_testkit import free_port, running, wait_until


def _status(url: str) -> int:
    try:
        return httpx.get(url, timeout=5).status_code
    except httpx.TransportError:
        return 0


def test_a_sigtermed_api_turns_unready_serves_on_and_exits_within_its_grace(
    base: Rendered, set_up_database: str, tmp_path: Path
) -> None:
    api = base.get("Deployment", "lgos-api")
    box = container(api, "api")
    drain = float(plain_env(base, box)["LGOS_DRAIN_DELAY"])
    pre_stop = box["lifecycle"]["preStop"]["sleep"]["seconds"]
    grace = pod_spec(api)["terminationGracePeriodSeconds"]
    keys = generated_secrets(tmp_path / "secrets")
    port = free_port()
    argv, env = local_command(
        base,
        api,
        "api",
        tmp_path,
        LGOS_DATABASE_URL=set_up_database,
        LGOS_API_KEYS=keys["api.env"]["api-keys"],
        DEMO_FILES_API_KEY=keys["files.env"]["service-key"],
        LGOS_BATCH_FILES_API_KEY=keys["files.env"]["service-key"],
        LGOS_HOST="127.0.0.1",
        LGOS_PORT=str(port),
    )
    url = f"http://127.0.0.1:{port}"
    with running(
        argv,
        log=tmp_path / "api.log",
        name="lgos serve",
        env=env,
        health_url=f"{url}/health/ready",
    ) as process:
        stopped_at = time.monotonic()
        process.process.send_signal(signal.SIGTERM)

        wait_until(lambda: _status(f"{url}/health/ready") == 503, 5, "not ready")
        # Still serving: requests the Service sends late are answered.
        assert _status(f"{url}/health/live") == 200
        assert _status(f"{url}/v1/health") == 200

        returncode = process.process.wait(timeout=grace)
        elapsed = time.monotonic() - stopped_at

    # uvicorn re-raises the SIGTERM it handled once it has shut down.
    assert returncode in (0, -signal.SIGTERM), process.log_tail()
    # It serves the whole drain delay, and leaves the kubelet's SIGKILL
    # (grace, counted from the preStop hook's start) unused.
    assert elapsed >= drain
    assert pre_stop + elapsed < grace
