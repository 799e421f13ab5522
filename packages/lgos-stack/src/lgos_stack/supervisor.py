"""A small process supervisor: start children, wait for health, stop by PID.

Each child runs in its own session, so a terminal's Ctrl+C reaches only the
supervisor, which then stops the children itself in reverse start order:
SIGTERM, a grace period, then SIGKILL — always addressed by the child's PID.
On Linux each child also gets SIGTERM if the supervisor dies without
cleaning up. Output goes to one log file per child.

A *one-shot* service (``oneshot=True``, e.g. creating database tables) must
run to completion with exit code 0 before the services after it start; a
service without an HTTP endpoint is ready when its ``probe`` says so.

While the stack runs, ``rerun`` runs a one-shot again and ``restart`` stops
one service by PID and starts it again (``just sync-models`` uses both).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, Any

import httpx

_PR_SET_PDEATHSIG = 1
_POLL = 0.1


class StackError(RuntimeError):
    """A child failed to start, failed its health check or exited."""


class Interrupted(Exception):
    """SIGINT or SIGTERM arrived."""


@dataclass(frozen=True)
class Service:
    """One child process and how to tell it is ready."""

    name: str
    argv: Sequence[str]
    port: int | None
    """The port it listens on (checked free before starting), if any."""
    url: str
    """What the banner shows."""
    health_url: str = ""
    env: dict[str, str] = field(default_factory=dict)
    after: tuple[str, ...] = ()
    """Services that must be healthy before this one starts."""
    healthy: Callable[[httpx.Response], bool] = lambda r: r.status_code == 200
    probe: Callable[[], bool] | None = None
    """Readiness without HTTP (used instead of ``health_url`` when set)."""
    oneshot: bool = False
    """Runs to completion: ready once it exited with code 0."""

    @property
    def slug(self) -> str:
        return self.name.lower().replace(" ", "-")


@dataclass
class Running:
    service: Service
    process: subprocess.Popen[bytes]
    log: Path


class Supervisor:
    """Starts ``services`` (respecting ``after``), watches and stops them."""

    def __init__(
        self,
        services: Sequence[Service],
        log_dir: Path,
        *,
        startup_timeout: float = 90,
        stop_timeout: float = 10,
    ) -> None:
        names = {s.name for s in services}
        for service in services:
            missing = set(service.after) - names
            if missing:
                raise ValueError(f"{service.name} waits for unknown {sorted(missing)}")
        self.services = list(services)
        self.log_dir = log_dir
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self.running: list[Running] = []

    def start(self) -> None:
        """Start every service and return once all are healthy.

        Raises:
            StackError: a child exited or stayed unhealthy past the timeout.
        """
        self.log_dir.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + self.startup_timeout
        pending = list(self.services)
        healthy: set[str] = set()
        with httpx.Client(timeout=2) as http:
            while pending or len(healthy) < len(self.running):
                for service in [s for s in pending if set(s.after) <= healthy]:
                    pending.remove(service)
                    self.running.append(self._spawn(service))
                for child in self.running:
                    name = child.service.name
                    if name not in healthy and self._check(http, child):
                        healthy.add(name)
                if time.monotonic() > deadline:
                    unhealthy = [
                        c for c in self.running if c.service.name not in healthy
                    ]
                    waiting = [c.service.name for c in unhealthy]
                    waiting += [f"{s.name} (not started)" for s in pending]
                    raise StackError(
                        f"not healthy after {self.startup_timeout:.0f} s: "
                        + ", ".join(waiting)
                        + "".join(_tail(c) for c in unhealthy)
                    )
                time.sleep(_POLL)

    def watch(self, wake: Callable[[], bool] = lambda: False) -> None:
        """Block until a child exits (``StackError``), a signal arrives, or
        ``wake()`` is true (then return)."""
        while not wake():
            for child in self.running:
                code = child.process.poll()
                if code is not None and not (child.service.oneshot and code == 0):
                    raise StackError(
                        f"{child.service.name} exited with code {code}" + _tail(child)
                    )
            time.sleep(_POLL * 2)

    def stop(self) -> None:
        """Stop every child by PID: SIGTERM in reverse order, then SIGKILL."""
        for child in reversed(self.running):
            if child.process.poll() is None:
                _signal(child.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + self.stop_timeout
        for child in reversed(self.running):
            remaining = max(0.0, deadline - time.monotonic())
            try:
                child.process.wait(timeout=remaining)
            except subprocess.TimeoutExpired:
                _signal(child.process.pid, signal.SIGKILL)
                child.process.wait()
        self.running.clear()

    def pids(self) -> dict[str, int]:
        return {c.service.name: c.process.pid for c in self.running}

    def rerun(self, name: str) -> None:
        """Run the one-shot ``name`` again, to completion (log appended).

        Raises:
            StackError: it exited with a non-zero code or took too long.
        """
        index, child = self._find(name)
        if not child.service.oneshot:
            raise ValueError(f"{name} is not a one-shot service")
        again = self._spawn(child.service, append=True)
        self.running[index] = again
        try:
            code = again.process.wait(timeout=self.startup_timeout)
        except subprocess.TimeoutExpired:
            _signal(again.process.pid, signal.SIGKILL)
            again.process.wait()
            raise StackError(
                f"{name} did not finish in {self.startup_timeout:.0f} s" + _tail(again)
            ) from None
        if code != 0:
            raise StackError(f"{name} exited with code {code}" + _tail(again))

    def restart(self, name: str) -> None:
        """Stop ``name`` by PID, start it again and wait until it is healthy.

        Raises:
            StackError: it exited or stayed unhealthy past the startup timeout.
        """
        index, child = self._find(name)
        _stop_one(child.process, self.stop_timeout)
        again = self._spawn(child.service, append=True)
        self.running[index] = again
        deadline = time.monotonic() + self.startup_timeout
        with httpx.Client(timeout=2) as http:
            while not self._check(http, again):
                if time.monotonic() > deadline:
                    raise StackError(
                        f"{name} not healthy {self.startup_timeout:.0f} s after "
                        "its restart" + _tail(again)
                    )
                time.sleep(_POLL)

    def _find(self, name: str) -> tuple[int, Running]:
        for index, child in enumerate(self.running):
            if child.service.name == name:
                return index, child
        raise ValueError(f"{name} is not running in this stack")

    def _spawn(self, service: Service, *, append: bool = False) -> Running:
        log = self.log_dir / f"{service.slug}.log"
        with log.open("ab" if append else "wb") as out:
            process = _popen(service, out)
        return Running(service=service, process=process, log=log)

    def _check(self, http: httpx.Client, child: Running) -> bool:
        code = child.process.poll()
        if child.service.oneshot and code == 0:
            return True
        if code is not None:
            raise StackError(
                f"{child.service.name} exited with code {code}" + _tail(child)
            )
        if child.service.oneshot:
            return False
        if child.service.probe is not None:
            return child.service.probe()
        try:
            return child.service.healthy(http.get(child.service.health_url))
        except httpx.HTTPError:
            return False


def _popen(service: Service, out: IO[bytes]) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            list(service.argv),
            env={**os.environ, **service.env},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
    except OSError as exc:
        raise StackError(f"cannot start {service.name}: {exc}") from exc


def _stop_one(process: subprocess.Popen[bytes], timeout: float) -> None:
    """SIGTERM by PID, then SIGKILL after ``timeout`` seconds."""
    if process.poll() is None:
        _signal(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _signal(process.pid, signal.SIGKILL)
        process.wait()


def _die_with_parent() -> None:
    """In the child, before exec: get SIGTERM when the supervisor dies."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _signal(pid: int, number: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, number)


def _tail(child: Running, lines: int = 15) -> str:
    try:
        text = child.log.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return ""
    body = "\n    ".join(text) or "(empty)"
    return f"\n  {child.service.name} log ({child.log}):\n    {body}"


class StopSignals:
    """SIGINT, SIGTERM and SIGHUP raise ``Interrupted`` once, while armed.

    After the first signal, or once ``disarm()`` is called (the stack is
    stopping), further signals are ignored: a second Ctrl+C, or the same
    signal forwarded by ``uv`` and ``just``, cannot cut a stop short.
    SIGHUP (the terminal closed) stops the stack like Ctrl+C. SIGUSR1 only
    sets ``reload_requested`` (``lgos-demo-stack sync-models`` sends it); the
    caller clears it when done.
    """

    def __init__(self) -> None:
        self.armed = True
        self.reload_requested = False
        self._previous: dict[int, Any] = {}

    def disarm(self) -> None:
        self.armed = False

    def __enter__(self) -> StopSignals:
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            self._previous[number] = signal.signal(number, self._handle)
        self._previous[signal.SIGUSR1] = signal.signal(signal.SIGUSR1, self._reload)
        return self

    def __exit__(self, *exc: object) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)

    def _reload(self, number: int, frame: FrameType | None) -> None:
        self.reload_requested = True

    def _handle(self, number: int, frame: FrameType | None) -> None:
        if self.armed:
            self.armed = False
            raise Interrupted(signal.Signals(number).name)


def write_state(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as JSON atomically (readers never see half a file)."""
    partial = path.with_suffix(".tmp")
    partial.write_text(json.dumps(data, indent=2) + "\n")
    partial.replace(path)
