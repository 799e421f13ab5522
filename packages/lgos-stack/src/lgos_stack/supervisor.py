"""A small process supervisor: start children, keep them running, stop by PID.

Each child runs in its own session, so a terminal's Ctrl+C reaches only the
supervisor, which then stops the children itself in reverse start order:
SIGTERM, a grace period, then SIGKILL — always addressed by the child's PID.
On Linux each child also gets SIGTERM if the supervisor dies without
cleaning up. Output goes to one log file per child.

A *one-shot* service (``oneshot=True``, e.g. creating database tables) must
run to completion with exit code 0 before the services after it start; a
service without an HTTP endpoint is ready when its ``probe`` says so.

Once every service is healthy, ``watch`` keeps them running: a child that
exits is started again on its own after a back-off, the others untouched;
after too many crashes in a row it is left stopped and marked failed
(``restarts.py`` holds the policy). ``rerun`` runs a one-shot again and
``restart`` stops one service by PID and starts it again (``just restart``
and ``just sync-models`` use them).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import IO

import httpx

from lgos_stack.processes import signal_pid, signalled_when_parent_dies, stop_process
from lgos_stack.restarts import CrashHistory, RestartPolicy

_POLL = 0.1


class StackError(RuntimeError):
    """A child failed to start, failed its health check or exited."""


class State(StrEnum):
    """Where a child is, as ``stack.json`` and ``just status`` show it."""

    STARTING = "starting"
    """Started, not yet healthy."""
    RUNNING = "running"
    RESTARTING = "restarting"
    """It exited; it starts again once its back-off is over."""
    FAILED = "failed"
    """It crashed too often: left stopped until a person restarts it."""
    DONE = "done"
    """A one-shot that finished."""


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
    """A child and what the supervisor knows of it (replaced on each restart)."""

    service: Service
    process: subprocess.Popen[bytes]
    log: Path
    history: CrashHistory
    state: State = State.STARTING
    restarts: int = 0
    restart_at: float = 0.0
    """When a ``RESTARTING`` child starts again (the policy's clock)."""


class Supervisor:
    """Starts ``services`` (respecting ``after``), keeps them running, stops them."""

    def __init__(
        self,
        services: Sequence[Service],
        log_dir: Path,
        *,
        startup_timeout: float = 90,
        stop_timeout: float = 10,
        policy: RestartPolicy | None = None,
        say: Callable[[str], None] = lambda text: None,
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
        self.policy = policy or RestartPolicy()
        self.say = say
        """Where news of crashes and restarts goes (the stack's terminal)."""
        self.running: list[Running] = []

    def start(self) -> None:
        """Start every service and return once all are healthy.

        Each service has ``startup_timeout`` seconds (on the policy's clock)
        from its own start to become healthy, so a slow machine that starts
        one service after another still starts them all, and a service that
        hangs is named.
        A crash while starting stops the start: it is a configuration or
        installation problem, not bad luck.

        Raises:
            StackError: a child exited or stayed unhealthy past its timeout.
        """
        self.log_dir.mkdir(parents=True, exist_ok=True)
        pending = list(self.services)
        healthy: set[str] = set()
        started_at: dict[str, float] = {}
        with httpx.Client(timeout=2) as http:
            while pending or len(healthy) < len(self.running):
                for service in [s for s in pending if set(s.after) <= healthy]:
                    pending.remove(service)
                    self.running.append(self._spawn(service))
                    started_at[service.name] = self.policy.clock()
                for child in self.running:
                    name = child.service.name
                    if name not in healthy and self._check(http, child):
                        healthy.add(name)
                        child.state = _ready_state(child)
                late = [
                    c
                    for c in self.running
                    if c.service.name not in healthy
                    and self.policy.clock() - started_at[c.service.name]
                    > self.startup_timeout
                ]
                if late:
                    waiting = ", ".join(f"{s.name} (not started)" for s in pending)
                    raise StackError(
                        f"not healthy {self.startup_timeout:.0f} s after starting: "
                        + ", ".join(c.service.name for c in late)
                        + (f"; waiting for them: {waiting}" if waiting else "")
                        + "".join(_tail(c) for c in late)
                    )
                time.sleep(_POLL)

    def watch(
        self,
        wake: Callable[[], bool] = lambda: False,
        changed: Callable[[], None] = lambda: None,
    ) -> None:
        """Keep the children running until ``wake()`` is true (or a signal
        interrupts); ``changed()`` is called after any child changed state."""
        with httpx.Client(timeout=2) as http:
            while not wake():
                if self.tend(http):
                    changed()
                time.sleep(_POLL * 2)

    def tend(self, http: httpx.Client) -> bool:
        """One look at every child: note exits, restart those whose back-off
        is over, mark restarted ones running once healthy. Returns whether
        any child changed state."""
        changed = False
        for index, child in enumerate(self.running):
            if child.state in (State.FAILED, State.DONE):
                continue
            if child.state is State.RESTARTING:
                if self.policy.clock() >= child.restart_at:
                    self.running[index] = self._respawn(child, "after its crash")
                    changed = True
                continue
            code = child.process.poll()
            if code is not None:
                self._crashed(child, code)
                changed = True
            elif child.state is State.STARTING and self._ready(http, child):
                child.state = State.RUNNING
                self.say(f"{child.service.name} is back up (restart {child.restarts})")
                changed = True
        return changed

    def _crashed(self, child: Running, code: int) -> None:
        name = child.service.name
        delay = child.history.record()
        if delay is None:
            child.state = State.FAILED
            _note(child, "gave up after too many crashes; `just restart` starts it")
            self.say(
                f"{name} FAILED: it exited {len(child.history.times)} times within "
                f"{self.policy.window:g} s (last exit code {code}); the supervisor "
                f"gave up on it, the other services keep running. Fix it, then "
                f"`just restart {child.service.slug}`." + _tail(child)
            )
            return
        child.state = State.RESTARTING
        child.restart_at = self.policy.clock() + delay
        self.say(f"{name} exited with code {code}; restarting it in {delay:g} s")

    def stop(self) -> None:
        """Stop every child by PID: SIGTERM in reverse order, then SIGKILL."""
        for child in reversed(self.running):
            if child.process.poll() is None:
                signal_pid(child.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + self.stop_timeout
        for child in reversed(self.running):
            remaining = max(0.0, deadline - time.monotonic())
            try:
                child.process.wait(timeout=remaining)
            except subprocess.TimeoutExpired:
                signal_pid(child.process.pid, signal.SIGKILL)
                child.process.wait()
        self.running.clear()

    def pids(self) -> dict[str, int]:
        return {c.service.name: c.process.pid for c in self.running}

    def find(self, name: str) -> Running:
        """The child called ``name`` (or its slug, e.g. ``demo-api``).

        Raises:
            ValueError: no such service in this stack; the message lists them.
        """
        return self.running[self._index(name)]

    def rerun(self, name: str) -> None:
        """Run the one-shot ``name`` again, to completion (log appended).

        Raises:
            StackError: it exited with a non-zero code or took too long.
        """
        index = self._index(name)
        child = self.running[index]
        if not child.service.oneshot:
            raise ValueError(f"{name} is not a one-shot service")
        again = self._respawn(child, "run again")
        self.running[index] = again
        try:
            code = again.process.wait(timeout=self.startup_timeout)
        except subprocess.TimeoutExpired:
            signal_pid(again.process.pid, signal.SIGKILL)
            again.process.wait()
            again.state = State.FAILED
            raise StackError(
                f"{name} did not finish in {self.startup_timeout:.0f} s" + _tail(again)
            ) from None
        if code != 0:
            again.state = State.FAILED
            raise StackError(f"{name} exited with code {code}" + _tail(again))
        again.state = State.DONE

    def restart(self, name: str) -> None:
        """Stop ``name`` by PID, start it again and wait until it is healthy.

        Its crash history is forgotten: this is how a failed service comes
        back. A one-shot runs again instead.

        Raises:
            StackError: it exited or stayed unhealthy past the startup timeout.
        """
        index = self._index(name)
        child = self.running[index]
        if child.service.oneshot:
            self.rerun(name)
            return
        stop_process(child.process, timeout=self.stop_timeout)
        child.history.forget()
        again = self._respawn(child, "restart asked for")
        self.running[index] = again
        deadline = time.monotonic() + self.startup_timeout
        with httpx.Client(timeout=2) as http:
            while not self._check(http, again):
                if time.monotonic() > deadline:
                    raise StackError(
                        f"{again.service.name} not healthy "
                        f"{self.startup_timeout:.0f} s after its restart" + _tail(again)
                    )
                time.sleep(_POLL)
        again.state = State.RUNNING

    def _index(self, name: str) -> int:
        wanted = name.lower().replace(" ", "-")
        for index, child in enumerate(self.running):
            if child.service.slug == wanted:
                return index
        known = ", ".join(c.service.slug for c in self.running)
        raise ValueError(f"{name!r} is not a service of this stack (it runs {known})")

    def _spawn(self, service: Service) -> Running:
        log = self.log_dir / f"{service.slug}.log"
        with log.open("wb") as out:
            process = _popen(service, out)
        return Running(
            service=service, process=process, log=log, history=self._history()
        )

    def _respawn(self, child: Running, why: str) -> Running:
        """``child``'s service started again, its log appended."""
        _note(child, f"starting again ({why})")
        with child.log.open("ab") as out:
            process = _popen(child.service, out)
        return Running(
            service=child.service,
            process=process,
            log=child.log,
            history=child.history,
            restarts=child.restarts + 1,
        )

    def _history(self) -> CrashHistory:
        return CrashHistory(self.policy)

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
        return self._ready(http, child)

    def _ready(self, http: httpx.Client, child: Running) -> bool:
        """Whether a running child answers its health check (or probe)."""
        if child.service.probe is not None:
            return child.service.probe()
        try:
            return child.service.healthy(http.get(child.service.health_url))
        except httpx.HTTPError:
            return False


def _note(child: Running, text: str) -> None:
    """A line of the supervisor's own in the child's log."""
    with child.log.open("a") as out:
        out.write(f"\n--- lgos-demo-stack: {child.service.name} {text} ---\n")


def _ready_state(child: Running) -> State:
    return State.DONE if child.service.oneshot else State.RUNNING


def _popen(service: Service, out: IO[bytes]) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            list(service.argv),
            env={**os.environ, **service.env},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=signalled_when_parent_dies(signal.SIGTERM),
        )
    except OSError as exc:
        raise StackError(f"cannot start {service.name}: {exc}") from exc


def _tail(child: Running, lines: int = 15) -> str:
    try:
        text = child.log.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return ""
    body = "\n    ".join(text) or "(empty)"
    return f"\n  {child.service.name} log ({child.log}):\n    {body}"
