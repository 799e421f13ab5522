"""``lgos-demo-stack`` (what ``just up`` runs): start, report, stop by PID."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from lgos_stack.net import free_ports, http_ok
from lgos_stack.processes import pid_alive
from lgos_stack.services import StackOptions, plan_stack
from lgos_testkit import STARTUP_SECONDS, wait_until
from lgos_testkit.stack import postgres_dir, stack_env, start_stack, stop_stack

WAIT = 120.0


def test_ctrl_c_stops_every_child_and_configured_services_are_skipped(tmp_path):
    # Pointing at "another" Files API leaves SeaweedFS and the Files API out.
    env = stack_env(DEMO_FILES_URL="http://127.0.0.1:9/v1")
    postgres = postgres_dir()
    try:
        stack = start_stack(
            tmp_path / "state",
            env=env,
            postgres=postgres,
            without=("litellm",),
            timeout=STARTUP_SECONDS,
        )
        output = stack.output.read_text()
        stopped = stop_stack(stack.process, stack.pids)
        kept_data = (postgres / "data" / "PG_VERSION").exists()
    finally:
        shutil.rmtree(postgres, ignore_errors=True)

    assert set(stack.pids) == {
        "demo model",
        "search",
        "PostgreSQL",
        "database setup",
        "demo API",
        "background worker",
        "Prometheus",  # installed by `just tools`
    }
    assert kept_data  # the cluster stays for the next start
    assert "LGOS demo stack is up:" in output
    assert "DEMO_FILES_URL=http://127.0.0.1:9/v1" in output
    assert stopped
    assert stack.process.returncode == 0
    assert not [name for name, pid in stack.pids.items() if pid_alive(pid)]
    assert not (stack.state_dir / "stack.json").exists()
    assert (stack.state_dir / "logs" / "demo-api.log").exists()


def services(state_dir: Path) -> dict[str, dict[str, Any]]:
    """The running stack's ``stack.json`` services (rewritten atomically)."""
    found: dict[str, dict[str, Any]] = json.loads(
        (state_dir / "stack.json").read_text()
    )["services"]
    return found


def control(state_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lgos_stack", *args, f"--state-dir={state_dir}"],
        capture_output=True,
        text=True,
        timeout=WAIT,
    )


def wait_for(state_dir: Path, name: str, state: str, restarts: int) -> dict[str, Any]:
    def reached() -> bool:
        service = services(state_dir)[name]
        return bool(service["state"] == state and service["restarts"] == restarts)

    wait_until(reached, WAIT, f"{name} {state} after {restarts} restarts")
    return services(state_dir)[name]


def test_a_dead_service_is_restarted_alone_given_up_on_loudly_and_restartable(
    tmp_path,
):
    env = stack_env(DEMO_FILES_URL="http://127.0.0.1:9/v1")
    postgres = postgres_dir()
    try:
        stack = start_stack(
            tmp_path / "state",
            env=env,
            postgres=postgres,
            without=("litellm",),
            args=("--restart-backoff=0", "--max-restarts=1"),
            timeout=WAIT,
        )
        state_dir = stack.state_dir
        try:
            health = services(state_dir)["demo API"]["health"]
            # The case: SIGTERM to the demo API alone.
            os.kill(stack.pids["demo API"], signal.SIGTERM)
            api = wait_for(state_dir, "demo API", "running", restarts=1)
            api_back_up = http_ok(health)
            unknown = control(state_dir, "restart", "demo-apy")

            os.kill(stack.pids["search"], signal.SIGKILL)
            search = wait_for(state_dir, "search", "running", restarts=1)
            os.kill(search["pid"], signal.SIGKILL)
            wait_for(state_dir, "search", "failed", restarts=1)
            status_with_failure = control(state_dir, "status")
            api_through_the_failure = http_ok(health)
            revived = control(state_dir, "restart", "search")
            status_after = control(state_dir, "status")
            after = services(state_dir)
        finally:
            stopped = stop_stack(stack.process, stack.pids)
        output = stack.output.read_text()
    finally:
        shutil.rmtree(postgres, ignore_errors=True)

    assert api["pid"] != stack.pids["demo API"]
    assert api_back_up
    assert unknown.returncode == 1
    assert "'demo-apy' is not a service of this stack" in unknown.stderr
    assert "demo-api, background-worker" in unknown.stderr
    untouched = {"demo model", "PostgreSQL", "background worker"}
    assert {n: after[n]["pid"] for n in untouched} == {
        n: stack.pids[n] for n in untouched
    }
    assert {after[n]["restarts"] for n in untouched} == {0}

    assert status_with_failure.returncode == 1
    search_line = next(
        line for line in status_with_failure.stdout.splitlines() if "search" in line
    )
    assert "failed" in search_line
    assert "restarts 1" in search_line
    assert "search FAILED: it exited 2 times" in output
    assert api_through_the_failure

    assert revived.returncode == 0, revived.stderr
    assert "search restarted" in revived.stdout
    assert status_after.returncode == 0, status_after.stdout
    assert after["search"]["state"] == "running"
    assert after["search"]["restarts"] == 2
    api_line = next(
        line for line in status_after.stdout.splitlines() if "demo API" in line
    )
    assert "healthy" in api_line
    assert "restarts 1" in api_line

    # Ctrl+C still stops every child, the restarted ones included.
    assert stopped
    assert stack.process.returncode == 0
    assert not [pid for pid in (s["pid"] for s in after.values()) if pid_alive(pid)]


def test_a_busy_port_stops_the_stack_before_anything_starts(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "lgos_stack",
                f"--state-dir={tmp_path}",
                f"--port={port}",
                f"--model-port={free_ports(1)[0]}",
                "--without=litellm",
            ],
            env=stack_env(DEMO_FILES_URL="http://x/v1", DEMO_SEARCH_URL="http://y"),
            capture_output=True,
            text=True,
            timeout=30,
        )

    assert result.returncode != 0
    assert f"demo API (port {port}; --port moves it)" in result.stderr


def test_the_demo_api_is_told_where_the_started_services_are(tmp_path):
    options = StackOptions(
        state_dir=tmp_path, model_port=1, search_port=2, files_port=3
    )

    plan = plan_stack(options, environ={})

    api = next(s for s in plan.services if s.name == "demo API")
    assert api.env["DEMO_MODEL_BASE_URL"] == "http://127.0.0.1:1/v1"
    assert api.env["DEMO_SEARCH_URL"] == "http://127.0.0.1:2"
    assert api.env["DEMO_FILES_URL"] == "http://127.0.0.1:3/v1"
    files = next(s for s in plan.services if s.name == "Files API")
    assert files.after == ("SeaweedFS",)


def test_a_configured_database_is_set_up_once_before_the_api_and_worker(tmp_path):
    url = "postgresql://lgos@db.example/lgos"
    plan = plan_stack(
        StackOptions(state_dir=tmp_path), environ={"DEMO_DATABASE_URL": url}
    )

    services = {s.name: s for s in plan.services}
    assert "PostgreSQL" not in services
    setup = services["database setup"]
    assert setup.oneshot
    assert setup.env == {"DEMO_DATABASE_URL": url}
    assert services["demo API"].after == ("database setup",)
    assert services["demo API"].env["DEMO_DATABASE_URL"] == url
    worker = services["background worker"]
    assert worker.after == ("database setup",)
    assert worker.env["LGOS_BACKGROUND_BACKEND"] == "postgres"
    assert worker.env["LGOS_DATABASE_URL"] == url
    assert worker.argv[-2:] == [
        "worker",
        "--registry=lgos_demos.registry:build_registry",
    ]


def test_without_a_database_the_embedded_postgres_starts_first(tmp_path):
    plan = plan_stack(StackOptions(state_dir=tmp_path, postgres_port=7), environ={})

    services = {s.name: s for s in plan.services}
    postgres = services["PostgreSQL"]
    assert postgres.port == 7
    assert f"--data={tmp_path / 'postgres' / 'data'}" in postgres.argv
    assert services["database setup"].after == ("PostgreSQL",)
    assert services["demo API"].env["DEMO_DATABASE_URL"] == postgres.url
    # The URL (shown, and given to every process) names the password file.
    password_file = tmp_path / "postgres" / "postgres.pgpass"
    assert postgres.url.endswith(f"?passfile={password_file}")
