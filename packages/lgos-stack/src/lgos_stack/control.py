"""``lgos-demo-stack down|status|logs|restart|sync-models``: act on a running stack.

Each reads ``{state_dir}/stack.json`` (``state.py``) and addresses processes
by the PIDs recorded there, never by name:

- ``down`` sends SIGTERM to the supervisor, which stops its children (the
  same path as Ctrl+C), and waits until every recorded PID is gone;
- ``status`` probes every service's health URL (and PID) and shows the
  supervisor's state of it and how often it was restarted;
- ``logs [SERVICE] [-f]`` prints the logs with a service prefix per line;
- ``restart SERVICE`` asks the supervisor (``mailbox.py``) to stop that one
  service by PID and start it again, a failed one included;
- ``sync-models`` asks the supervisor to re-run the model sync and, if it
  succeeded, to restart LiteLLM only.

Both requests print the supervisor's answer once it is done.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from lgos_stack import mailbox
from lgos_stack.processes import pid_alive
from lgos_stack.state import (
    NotRunning,
    is_stack_supervisor,
    read_state,
    state_file,
)

CONTROL_COMMANDS = ("down", "status", "logs", "restart", "sync-models")


def run_control(argv: list[str]) -> int:
    """Run one control command; returns the exit code."""
    parser = argparse.ArgumentParser(prog=f"lgos-demo-stack {argv[0]}")
    parser.add_argument("--state-dir", type=Path, default=Path(".state"))
    parser.add_argument("--timeout", type=float, default=300, help="seconds")
    if argv[0] == "logs":
        parser.add_argument("service", nargs="?", help="one service (name or slug)")
        parser.add_argument("-f", "--follow", action="store_true")
        parser.add_argument("-n", "--lines", type=int, default=40)
    if argv[0] == "restart":
        parser.add_argument("service", help="its name or slug, e.g. demo-api")
    args = parser.parse_args(argv[1:])
    state_dir: Path = args.state_dir.resolve()
    try:
        if argv[0] == "logs":
            return show_logs(state_dir, args.service, args.follow, args.lines)
        state = read_state(state_dir)
        if argv[0] == "down":
            return stop_stack(state_dir, state, args.timeout)
        if argv[0] == "status":
            return report_status(state)
        if argv[0] == "restart":
            return restart_service(state_dir, state, args.service, args.timeout)
        return sync_models(state_dir, state, args.timeout)
    except NotRunning as exc:
        _err(str(exc))
        return 1


def stop_stack(state_dir: Path, state: dict[str, Any], timeout: float) -> int:
    pid: int = state["pid"]
    if not is_stack_supervisor(pid):
        _err(f"PID {pid} is no longer the stack's supervisor; nothing stopped")
        return 1
    _out(f"Stopping the demo stack (supervisor PID {pid})…")
    os.kill(pid, signal.SIGTERM)
    pids = {name: s["pid"] for name, s in state["services"].items()}
    deadline = time.monotonic() + timeout
    while pid_alive(pid) or any(pid_alive(p) for p in pids.values()):
        if time.monotonic() > deadline:
            left = [n for n, p in pids.items() if pid_alive(p)]
            _err(f"still running after {timeout:.0f} s: supervisor {pid}, {left}")
            return 1
        time.sleep(0.2)
    _out("Stopped.")
    return 0


def report_status(state: dict[str, Any]) -> int:
    """One line per service; exit 1 when any is down, unhealthy or failed."""
    services: dict[str, dict[str, Any]] = state["services"]
    width = max(len(name) for name in services)
    failing = 0
    with httpx.Client(timeout=3) as http:
        for name, service in services.items():
            verdict = _verdict(http, service)
            failing += verdict not in ("healthy", "done", "running")
            pid = f"pid {service['pid']}"
            restarts = f"restarts {service.get('restarts', 0)}"
            _out(
                f"{name:<{width}}  {verdict:<10}  {restarts:<11}  {pid:<11}  "
                f"{service['url']}"
            )
    return 1 if failing else 0


def _verdict(http: httpx.Client, service: dict[str, Any]) -> str:
    if service.get("oneshot"):
        return "done" if service.get("state", "done") == "done" else "failed"
    # The supervisor's word first: a service it gave up on, or one waiting
    # out its back-off, has no process to probe.
    if service.get("state") in ("failed", "restarting"):
        return str(service["state"])
    if not pid_alive(service["pid"]):
        return "exited"
    if not service.get("health"):
        return "running"
    try:
        response = http.get(service["health"])
    except httpx.HTTPError:
        return "starting" if service.get("state") == "starting" else "no answer"
    # SeaweedFS's S3 answers 403 to anonymous requests: any non-5xx is alive.
    return "healthy" if response.status_code < 500 else f"HTTP {response.status_code}"


def restart_service(
    state_dir: Path, state: dict[str, Any], service: str, timeout: float
) -> int:
    _out(f"Restarting {service}…")
    request = mailbox.post(state_dir, "restart", service)
    answer = _ask(state_dir, state, request, timeout)
    if answer is None:
        return 1
    if not answer.ok:
        _err(f"restart {service}: {answer.message}")
        return 1
    _out(answer.message)
    return 0


def sync_models(state_dir: Path, state: dict[str, Any], timeout: float) -> int:
    if "LiteLLM" not in state["services"]:
        _err("this stack runs without LiteLLM: nothing to sync")
        return 1
    _out("Re-syncing LiteLLM's model list and restarting LiteLLM…")
    answer = _ask(state_dir, state, mailbox.post(state_dir, "sync-models"), timeout)
    if answer is None:
        return 1
    if not answer.ok:
        _err(f"sync-models failed: {answer.message}")
        return 1
    _out(answer.message)
    models = _litellm_models(read_state(state_dir))
    if models is not None:
        _out("LiteLLM now serves: " + (", ".join(models) or "(no models)"))
    return 0


def _ask(
    state_dir: Path, state: dict[str, Any], request: mailbox.Request, timeout: float
) -> mailbox.Answer | None:
    """Signal the supervisor about ``request`` and wait for its answer."""
    os.kill(state["pid"], signal.SIGUSR1)
    deadline = time.monotonic() + timeout
    while (answer := mailbox.collect(state_dir, request)) is None:
        if time.monotonic() > deadline or not pid_alive(state["pid"]):
            _err("the stack did not answer (see `just logs`)")
            return None
        time.sleep(0.2)
    return answer


def _litellm_models(state: dict[str, Any]) -> list[str] | None:
    key = os.environ.get("LITELLM_MASTER_KEY")
    if key is None and state.get("litellm_master_key_file"):
        key = Path(state["litellm_master_key_file"]).read_text().strip()
    try:
        response = httpx.get(
            state["services"]["LiteLLM"]["url"].rstrip("/") + "/models",
            headers={"Authorization": f"Bearer {key}"},
            timeout=10,
        )
        response.raise_for_status()
    except httpx.HTTPError:
        return None
    return sorted(model["id"] for model in response.json()["data"])


def show_logs(state_dir: Path, service: str | None, follow: bool, lines: int) -> int:
    """Each log line prefixed by its service; ``follow`` keeps reading."""
    logs = sorted((state_dir / "logs").glob("*.log"))
    if service is not None:
        slug = service.lower().replace(" ", "-")
        logs = [log for log in logs if log.stem == slug]
        if not logs:
            known = ", ".join(
                p.stem for p in sorted((state_dir / "logs").glob("*.log"))
            )
            _err(f"no log for {service!r} in {state_dir / 'logs'} (known: {known})")
            return 1
    if not logs:
        _err(f"no logs in {state_dir / 'logs'} yet: start the stack first")
        return 1
    width = max(len(log.stem) for log in logs)
    offsets: dict[Path, int] = {}
    for log in logs:
        data = log.read_bytes()
        for line in data.decode(errors="replace").splitlines()[-lines:]:
            _out(f"{log.stem:<{width}} | {line}")
        offsets[log] = len(data)
    while follow and _still_running(state_dir):
        for log in logs:
            with log.open("rb") as stream:
                stream.seek(offsets[log])
                data = stream.read()
            complete = data[: data.rfind(b"\n") + 1]
            offsets[log] += len(complete)
            for line in complete.decode(errors="replace").splitlines():
                _out(f"{log.stem:<{width}} | {line}")
        time.sleep(0.3)
    return 0


def _still_running(state_dir: Path) -> bool:
    return state_file(state_dir).exists()


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _err(text: str) -> None:
    sys.stderr.write(f"lgos-demo-stack: {text}\n")
