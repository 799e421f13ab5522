"""The native demo stack (``lgos-demo-stack``) as a process a test owns.

``start_stack`` runs ``python -m lgos_stack`` on a free loopback port
for every service, waits until it wrote ``stack.json`` (every service
healthy) and returns each service's PID and URL. ``stop_stack`` sends the
supervisor SIGINT (it stops its children itself) and, should it hang, kills
what is left by PID. ``read_stack`` reads a stack someone else started.
``stack_env`` and ``postgres_dir`` are what a test starts it with.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lgos_stack.net import free_ports
from lgos_stack.services import PORT_FLAGS

_POLL = 0.1
_FOREIGN_SETTINGS = ("DEMO_", "LGOS_", "LITELLM_", "OPENAI_", "WEBUI_", "CHAINLIT_")


def stack_env(base: Mapping[str, str] = os.environ, **extra: str) -> dict[str, str]:
    """``base`` without settings that would point the stack elsewhere, the demo
    model answering at once (no token delay), then ``extra``."""
    env = {k: v for k, v in base.items() if not k.startswith(_FOREIGN_SETTINGS)}
    return env | {"DEMO_MODEL_TOKEN_DELAY": "0"} | extra


def postgres_dir(prefix: str = "lgos-stack-pg-") -> Path:
    """A fresh folder for the stack's PostgreSQL cluster (``--postgres-dir``).

    As root the server runs as its own user and the folders above its data
    are made traversable, so it lives under the system temp folder rather
    than in pytest's private one. Delete it after the stack stopped."""
    return Path(tempfile.mkdtemp(prefix=prefix))


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

    @property
    def api_url(self) -> str:
        return self.url("demo API")

    @property
    def files_url(self) -> str:
        return self.url("Files API")

    @property
    def model_url(self) -> str:
        return self.url("demo model")

    @property
    def database_url(self) -> str:
        return self.url("PostgreSQL")

    @property
    def search_url(self) -> str:
        return self.url("search").split("/search", 1)[0]


def start_stack(
    state_dir: Path,
    *,
    env: Mapping[str, str],
    args: Sequence[str] = (),
    postgres: Path | None = None,
    without: Sequence[str] = (),
    timeout: float,
) -> RunningStack:
    """``lgos-demo-stack`` in ``state_dir`` with free ports and ``args``: its
    PostgreSQL cluster in ``postgres`` (see ``postgres_dir``), the services
    ``without`` names left out (``--without``), each service given
    ``timeout`` seconds from its start to be healthy."""
    state_dir.mkdir(parents=True, exist_ok=True)
    output = state_dir / "stack.out"
    flags = list(PORT_FLAGS.values())
    ports = free_ports(len(flags))
    argv = [
        sys.executable,
        "-m",
        "lgos_stack",
        f"--state-dir={state_dir}",
        *(f"{flag}={port}" for flag, port in zip(flags, ports, strict=True)),
        f"--startup-timeout={timeout}",
        *([f"--postgres-dir={postgres}"] if postgres is not None else []),
        *(f"--without={name}" for name in without),
        *args,
    ]
    with output.open("wb") as out:
        process = subprocess.Popen(
            argv, env=dict(env), stdout=out, stderr=subprocess.STDOUT
        )
    state = state_dir / "stack.json"
    # The stack gives each service ``timeout`` seconds from its own start and
    # exits naming a late one; a slow machine that starts them one after
    # another takes longer in all, so only the stack's exit ends this wait
    # (pytest-timeout guards against a stack that neither starts nor exits).
    while not state.exists():
        if process.poll() is not None:
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
