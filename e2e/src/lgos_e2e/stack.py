"""The native demo stack for the browser suite: started once, stopped by PID.

``start_stack`` runs ``lgos-demo-stack`` (``python -m lgos_demos.stack``) on
free loopback ports in a state folder, waits until it wrote ``stack.json``
(every service healthy) and returns each service's PID and URL.
``stop_stack`` sends the supervisor SIGINT (it stops its children itself)
and, should it hang, kills what is left by PID.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from lgos_demos.stack.services import free_ports

STARTUP_SECONDS = 240.0
"""Open WebUI alone takes ~30 s to start on a quiet machine; ours is shared."""

_POLL = 0.2


class StackStartError(RuntimeError):
    """The stack exited or did not become healthy in time."""


@dataclass(frozen=True)
class RunningStack:
    """A running stack: its supervisor and each child's PID and URL."""

    process: subprocess.Popen[bytes] | None
    """``None`` for a stack this suite attached to and does not own."""
    state_dir: Path
    output: Path
    pids: dict[str, int]
    urls: dict[str, str]

    def url(self, service: str) -> str:
        try:
            return self.urls[service]
        except KeyError:
            raise KeyError(
                f"the stack runs no {service!r}; it runs {sorted(self.urls)}"
            ) from None


def stack_env(base: Mapping[str, str] = os.environ, **extra: str) -> dict[str, str]:
    """``base`` without settings that would point the stack elsewhere."""
    prefixes = ("DEMO_", "LGOS_", "LITELLM_", "OPENAI_", "WEBUI_", "CHAINLIT_")
    env = {k: v for k, v in base.items() if not k.startswith(prefixes)}
    return env | extra


def start_stack(
    state_dir: Path,
    *,
    env: Mapping[str, str],
    port_flags: tuple[str, ...],
    extra_args: tuple[str, ...] = (),
    timeout: float = STARTUP_SECONDS,
) -> RunningStack:
    """``lgos-demo-stack`` with a free port for each of ``port_flags``."""
    state_dir.mkdir(parents=True, exist_ok=True)
    output = state_dir / "stack.out"
    ports = free_ports(len(port_flags))
    argv = [
        sys.executable,
        "-m",
        "lgos_demos.stack",
        f"--state-dir={state_dir}",
        *(f"{flag}={port}" for flag, port in zip(port_flags, ports, strict=True)),
        f"--startup-timeout={timeout}",
        *extra_args,
    ]
    with output.open("wb") as out:
        process = subprocess.Popen(
            argv, env=dict(env), stdout=out, stderr=subprocess.STDOUT
        )
    state = state_dir / "stack.json"
    deadline = time.monotonic() + timeout + 15
    while not state.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            stop_stack(process, {})
            raise StackStartError(
                f"lgos-demo-stack did not start:\n{output.read_text()[-4000:]}"
            )
        time.sleep(_POLL)
    services = json.loads(state.read_text())["services"]
    return RunningStack(
        process=process,
        state_dir=state_dir,
        output=output,
        pids={name: int(s["pid"]) for name, s in services.items()},
        urls={name: str(s["url"]) for name, s in services.items()},
    )


def attach_stack(state_dir: Path) -> RunningStack:
    """A stack someone else started (``lgos-demo-stack --state-dir``): the
    suite uses it and leaves it running. For working on the suite itself."""
    state = state_dir / "stack.json"
    if not state.is_file():
        raise StackStartError(f"no running stack: {state} does not exist")
    data = json.loads(state.read_text())
    services = data["services"]
    return RunningStack(
        process=None,
        state_dir=state_dir,
        output=state_dir / "stack.out",
        pids={name: int(s["pid"]) for name, s in services.items()},
        urls={name: str(s["url"]) for name, s in services.items()},
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def stop_stack(
    process: subprocess.Popen[bytes], pids: Mapping[str, int], timeout: float = 60
) -> bool:
    """SIGINT the supervisor; if it hangs, SIGKILL it and its children by PID.

    Returns whether the supervisor stopped on its own in time."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        for pid in pids.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.kill()
        process.wait()
        return False
    return True
