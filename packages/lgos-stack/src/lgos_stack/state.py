"""``{state_dir}/stack.json``: what a running stack tells other commands.

    {
      "pid": 1234,                      # the supervisor (lgos-demo-stack)
      "services": {
        "LiteLLM": {"pid": 1240, "url": "http://127.0.0.1:4000/v1",
                    "health": "http://127.0.0.1:4000/health/liveliness",
                    "log": ".state/logs/litellm.log", "oneshot": false,
                    "state": "running", "restarts": 0},
        ...
      },
      "litellm_master_key_file": ".state/litellm/master-key"
    }

Service names (the keys) are the banner's: "demo model", "search",
"SeaweedFS", "Files API", "PostgreSQL", "database setup", "demo API",
"background worker", "model sync", "LiteLLM", "Chainlit", "Open WebUI",
"Open WebUI functions" (those that run). ``health`` is null for services
without an HTTP check; ``litellm_master_key_file`` is null when
LITELLM_MASTER_KEY came from the environment (the key itself is never
written here). ``state`` is the supervisor's view (``State``: starting,
running, restarting, failed, done); ``restarts`` counts the starts after the
first, on a crash or asked for. The file exists only while the stack runs;
it is rewritten whenever a service changes state.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from lgos_stack.gateway import master_key_file
from lgos_stack.processes import pid_alive
from lgos_stack.supervisor import Supervisor


def state_file(state_dir: Path) -> Path:
    return state_dir / "stack.json"


def stack_state(state_dir: Path, supervisor: Supervisor) -> dict[str, Any]:
    services = {
        child.service.name: {
            "pid": child.process.pid,
            "url": child.service.url,
            "health": child.service.health_url or None,
            "log": str(child.log),
            "oneshot": child.service.oneshot,
            "state": str(child.state),
            "restarts": child.restarts,
        }
        for child in supervisor.running
    }
    key_file = master_key_file(state_dir)
    generated = "LiteLLM" in services and "LITELLM_MASTER_KEY" not in os.environ
    return {
        "pid": os.getpid(),
        "services": services,
        "litellm_master_key_file": str(key_file) if generated else None,
    }


class NotRunning(RuntimeError):
    """No stack runs for this state folder."""


def read_state(state_dir: Path) -> dict[str, Any]:
    """The running stack's state.

    Raises:
        NotRunning: there is no stack.json (or its supervisor is gone).
    """
    path = state_file(state_dir)
    try:
        state: dict[str, Any] = json.loads(path.read_text())
    except FileNotFoundError:
        raise NotRunning(
            f"no native stack is running for {state_dir} (no {path.name}); "
            "start one with `just up native`"
        ) from None
    if not pid_alive(state["pid"]):
        raise NotRunning(
            f"the stack recorded in {path} is gone (supervisor PID {state['pid']} "
            "is not running); delete the file and start again"
        )
    return state


def is_stack_supervisor(pid: int) -> bool:
    """Whether ``pid`` still is an ``lgos-demo-stack`` (not a reused PID)."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return pid_alive(pid)  # no procfs: trust the recorded PID
    return b"lgos_stack" in command or b"lgos-demo-stack" in command


def write_state(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as JSON atomically (readers never see half a file)."""
    partial = path.with_suffix(".tmp")
    partial.write_text(json.dumps(data, indent=2) + "\n")
    partial.replace(path)
