"""One extra server process for the suite: started, waited on, stopped by PID."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import httpx

_POLL = 0.2


class ServerStartError(RuntimeError):
    """The process exited or never answered in time."""


def wait_for_http(
    url: str,
    process: subprocess.Popen[bytes],
    log: Path,
    *,
    timeout: float,
    name: str,
) -> None:
    """Poll ``url`` until it answers 200, failing early if ``process`` exits."""
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=5) as http:
        while True:
            if process.poll() is not None:
                raise ServerStartError(
                    f"{name} exited with {process.returncode}:\n"
                    f"{log.read_text(errors='replace')[-4000:]}"
                )
            with contextlib.suppress(httpx.TransportError):
                if http.get(url).status_code == 200:
                    return
            if time.monotonic() > deadline:
                raise ServerStartError(
                    f"{name} did not answer {url} within {timeout:.0f} s:\n"
                    f"{log.read_text(errors='replace')[-4000:]}"
                )
            time.sleep(_POLL)


def stop_process(process: subprocess.Popen[bytes], timeout: float = 15) -> None:
    """SIGTERM, a grace period, then SIGKILL (this process only, by PID)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def server(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    log: Path,
    health_url: str,
    name: str,
    timeout: float = 120,
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``argv`` until the block ends; yields once ``health_url`` answers."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            list(argv), env=dict(env), cwd=cwd, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        wait_for_http(health_url, process, log, timeout=timeout, name=name)
        yield process
    finally:
        stop_process(process)
