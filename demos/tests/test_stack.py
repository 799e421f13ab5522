"""``lgos-demo-stack`` (what ``just up`` runs): start, report, stop by PID."""

from __future__ import annotations

import socket
import subprocess
import sys

from demo_support import alive, clean_env, start_stack, stop_stack_process
from lgos_demos.stack.services import StackOptions, free_ports, plan_stack


def test_ctrl_c_stops_every_child_and_configured_services_are_skipped(tmp_path):
    # Pointing at "another" Files API leaves SeaweedFS and the Files API out.
    env = clean_env(DEMO_FILES_URL="http://127.0.0.1:9/v1")
    stack = start_stack(tmp_path / "state", env=env)

    output = stack.output.read_text()
    stopped = stop_stack_process(stack.process, stack.pids)

    assert set(stack.pids) == {"demo model", "search", "demo API"}
    assert "LGOS demo stack is up:" in output
    assert "DEMO_FILES_URL=http://127.0.0.1:9/v1" in output
    assert stopped
    assert stack.process.returncode == 0
    assert not [name for name, pid in stack.pids.items() if alive(pid)]
    assert not (stack.state_dir / "stack.json").exists()
    assert (stack.state_dir / "logs" / "demo-api.log").exists()


def test_a_busy_port_stops_the_stack_before_anything_starts(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "lgos_demos.stack",
                f"--state-dir={tmp_path}",
                f"--port={port}",
                f"--model-port={free_ports(1)[0]}",
            ],
            env=clean_env(DEMO_FILES_URL="http://x/v1", DEMO_SEARCH_URL="http://y"),
            capture_output=True,
            text=True,
            timeout=30,
        )

    assert result.returncode != 0
    assert f"demo API (port {port})" in result.stderr


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
