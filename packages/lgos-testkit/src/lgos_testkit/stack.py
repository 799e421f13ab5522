"""The native demo stack (``lgos-demo-stack``) as a process a test owns.

``start_stack`` runs ``python -m lgos_demos.stack`` on a free loopback port
for every service, waits until it wrote ``stack.json`` (every service
healthy) and returns each service's PID and URL. ``stop_stack`` sends the
supervisor SIGINT (it stops its children itself) and, should it hang, kills
what is left by PID. ``read_stack`` reads a stack someone else started.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lgos_testkit.net import free_ports

PORT_FLAGS = (
    "--port",
    "--model-port",
    "--search-port",
    "--files-port",
    "--s3-port",
    "--postgres-port",
    "--litellm-port",
    "--chainlit-port",
    "--open-webui-port",
)
"""Every port ``lgos-demo-stack`` opens: tests never use a person's defaults."""

_POLL = 0.1


class StackStartError(RuntimeError):
    """The stack exited or did not become healthy in time."""


@dataclass(frozen=True)
class RunningStack:
    """A running stack: its supervisor and each child's PID and URL."""

    process: subprocess.Popen[bytes] | None
    """``None`` for a stack the test attached to and does not own."""
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


def start_stack(
    state_dir: Path,
    *,
    env: Mapping[str, str],
    args: Sequence[str] = (),
    timeout: float,
) -> RunningStack:
    """``lgos-demo-stack`` in ``state_dir`` with free ports and ``args``."""
    state_dir.mkdir(parents=True, exist_ok=True)
    output = state_dir / "stack.out"
    ports = free_ports(len(PORT_FLAGS))
    argv = [
        sys.executable,
        "-m",
        "lgos_demos.stack",
        f"--state-dir={state_dir}",
        *(f"{flag}={port}" for flag, port in zip(PORT_FLAGS, ports, strict=True)),
        f"--startup-timeout={timeout}",
        *args,
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
    return read_stack(state_dir, process)


def read_stack(
    state_dir: Path, process: subprocess.Popen[bytes] | None = None
) -> RunningStack:
    """The services ``state_dir/stack.json`` lists (a running stack's)."""
    state = state_dir / "stack.json"
    if not state.is_file():
        raise StackStartError(f"no running stack: {state} does not exist")
    services = json.loads(state.read_text())["services"]
    return RunningStack(
        process=process,
        state_dir=state_dir,
        output=state_dir / "stack.out",
        pids={name: int(s["pid"]) for name, s in services.items()},
        urls={name: str(s["url"]) for name, s in services.items()},
    )


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
