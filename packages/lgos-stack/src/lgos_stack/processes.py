"""Processes: whether a PID runs, and a subprocess started with its output in
a log file, waited on until healthy and stopped by its PID (never its
group); a child armed to get a signal when its parent dies.

The one home of these helpers (with ``lgos_stack.net``): the stack, the test
kit, the browser suite, the benchmarks and the core's tests use them.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lgos_stack.net import STARTUP_SECONDS, http_ok, wait_until

_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class RunningProcess:
    """A process we started; its stdout and stderr go to ``log``."""

    process: subprocess.Popen[bytes]
    log: Path
    name: str

    @property
    def pid(self) -> int:
        return self.process.pid

    def exited(self) -> bool:
        return self.process.poll() is not None

    def log_tail(self, chars: int = 3000) -> str:
        """The end of the log (kept after the process stopped)."""
        if not self.log.exists():
            return ""
        return self.log.read_text(errors="replace")[-chars:]

    def wait_healthy(self, url: str, timeout: float) -> None:
        """Wait until ``GET url`` answers 2xx.

        Raises ``RuntimeError`` with the log tail as soon as the process
        exits, ``TimeoutError`` (also with the log tail) after ``timeout``.
        """

        def healthy() -> bool:
            if self.exited():
                raise RuntimeError(
                    f"{self.name} exited (code {self.process.returncode}) before "
                    f"{url} answered:\n{self.log_tail()}"
                )
            return http_ok(url)

        try:
            wait_until(healthy, timeout, f"{self.name} at {url}")
        except TimeoutError as error:
            raise TimeoutError(f"{error}:\n{self.log_tail()}") from None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> None:
        """Send ``sig`` to this PID only; SIGKILL if it has not exited in time."""
        stop_process(self.process, sig, timeout)


def signal_pid(pid: int, sig: int) -> None:
    """Send ``sig`` to ``pid``; a process already gone is not an error."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def stop_process(
    process: subprocess.Popen[bytes], sig: int = signal.SIGTERM, timeout: float = 20
) -> None:
    """Send ``sig`` to ``process``'s PID only, then SIGKILL it if it has not
    exited after ``timeout`` seconds; returns once it has exited."""
    if process.poll() is None:
        signal_pid(process.pid, sig)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        signal_pid(process.pid, signal.SIGKILL)
        process.wait()


def signalled_when_parent_dies(sig: int) -> Callable[[], None] | None:
    """A ``preexec_fn`` for ``Popen``: the child gets ``sig`` when the process
    that started it dies, even by SIGKILL (Linux; ``None`` elsewhere)."""
    if sys.platform != "linux":
        return None

    def arm() -> None:  # in the child, before exec
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, sig)

    return arm


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` still runs.

    A zombie (exited, not yet reaped by its parent) counts as gone: it does
    no work and holds no port, whoever its parent is.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no procfs: trust kill(0)
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def start_process(
    command: Sequence[str | os.PathLike[str]],
    *,
    log: Path,
    name: str,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    append: bool = False,
) -> RunningProcess:
    """Start ``command`` with stdout and stderr in ``log`` (appended with
    ``append``, e.g. for a restart); returns without waiting."""
    with log.open("ab" if append else "wb") as out:
        process = subprocess.Popen(
            [os.fspath(part) for part in command],
            env=None if env is None else dict(env),
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    return RunningProcess(process=process, log=log, name=name)


@contextlib.contextmanager
def running(
    command: Sequence[str | os.PathLike[str]],
    *,
    log: Path,
    name: str,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    health_url: str | None = None,
    timeout: float = STARTUP_SECONDS,
    stop_signal: int = signal.SIGTERM,
    stop_timeout: float = 20,
) -> Iterator[RunningProcess]:
    """Run ``command`` for the ``with`` block: once ``health_url`` (if given)
    answers 2xx, yield it; afterwards stop it by PID. The log stays."""
    started = start_process(command, log=log, name=name, env=env, cwd=cwd)
    try:
        if health_url is not None:
            started.wait_healthy(health_url, timeout)
        yield started
    finally:
        started.stop(stop_signal, stop_timeout)
