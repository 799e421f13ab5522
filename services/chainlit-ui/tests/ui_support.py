"""Real servers for the tests: uvicorn in a thread, SeaweedFS, the Files API."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import uvicorn

T = TypeVar("T")

S3_ACCESS_KEY = "ui-test-access"
S3_SECRET_KEY = "ui-test-secret-key"
UI_FILES_KEY = "sk-ui-test"
GRAPH_FILES_KEY = "sk-graph-test"


def free_ports(count: int) -> list[int]:
    """Distinct free loopback ports (held open together while choosing)."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise TimeoutError(f"timed out waiting for {what}")


async def collect(events: AsyncIterator[T]) -> list[T]:
    return [event async for event in events]


class ThreadServer:
    """uvicorn serving an ASGI app on a free loopback port, in a thread."""

    def __init__(self, app: Any) -> None:
        self.port = free_ports(1)[0]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ThreadServer:
        self.thread.start()
        wait_until(lambda: self.server.started, 20, "uvicorn")
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def stop(process: subprocess.Popen[bytes], timeout: float = 15) -> None:
    """Stop one process we started, by its handle (SIGTERM, then SIGKILL)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def seaweedfs(root: Path) -> Iterator[str]:
    """``weed mini`` on loopback ports inside ``root``; yields the S3 URL."""
    weed = shutil.which("weed") or str(Path(sys.executable).parent / "weed")
    for name in ("log", "data", "tmp"):
        (root / name).mkdir()
    flags = [
        "s3.port",
        "s3.port.grpc",
        "master.port",
        "master.port.grpc",
        "volume.port",
        "volume.port.grpc",
        "filer.port",
        "filer.port.grpc",
        "admin.port",
        "admin.port.grpc",
    ]
    ports = dict(zip(flags, free_ports(len(flags)), strict=True))
    command = [
        weed,
        f"-logdir={root / 'log'}",
        "mini",
        f"-dir={root / 'data'}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        "-master.telemetry=false",
        "-webdav=false",
        "-admin.ui=false",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        f"-s3.localSocket={root / 's3.sock'}",
        f"-filer.localSocket={root / 'filer.sock'}",
        "-idleTimeout=3",
        *(f"-{flag}={port}" for flag, port in ports.items()),
    ]
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": S3_ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": S3_SECRET_KEY,
        "TMPDIR": str(root / "tmp"),
    }
    with (root / "weed.out").open("wb") as out:
        process = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=root
        )
    try:
        yield f"http://127.0.0.1:{ports['s3.port']}"
    finally:
        stop(process, timeout=30)
        shutil.rmtree(root / "data", ignore_errors=True)


@dataclass(frozen=True)
class FilesServer:
    url: str
    """The OpenAI base URL (``.../v1``)."""
    process: subprocess.Popen[bytes]


@contextlib.contextmanager
def files_api(s3_url: str, log: Path) -> Iterator[FilesServer]:
    """``python -m lgos_files_api`` on a free port; one owner, two keys."""
    port = free_ports(1)[0]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LGOS_FILES_")}
    env |= {
        "LGOS_FILES_S3_ENDPOINT": s3_url,
        "LGOS_FILES_S3_BUCKET": "lgos-chainlit-test",
        "LGOS_FILES_S3_ACCESS_KEY": S3_ACCESS_KEY,
        "LGOS_FILES_S3_SECRET_KEY": S3_SECRET_KEY,
        "LGOS_FILES_API_KEYS": json.dumps(
            {UI_FILES_KEY: "chat", GRAPH_FILES_KEY: "chat"}
        ),
    }
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "lgos_files_api",
                "--host=127.0.0.1",
                f"--port={port}",
                "--log-level=warning",
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = FilesServer(url=f"http://127.0.0.1:{port}/v1", process=process)

    def healthy() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"files API exited early:\n{log.read_text()[-3000:]}")
        try:
            return (
                httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code
                == 200
            )
        except httpx.TransportError:
            return False

    try:
        wait_until(healthy, 30, "the Files API")
        yield server
    finally:
        stop(process)


REPO_ROOT = Path(__file__).resolve().parents[3]
LITELLM_BIN = REPO_ROOT / ".tools" / "litellm" / "bin" / "litellm"
LITELLM_MASTER_KEY = "sk-ui-test-master"
# Keeps LiteLLM off the network (cost map, beta headers, ...) and out of DEV mode.
LITELLM_OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
    "LITELLM_LOCAL_BLOG_POSTS": "True",
    "LITELLM_LOCAL_AUTOROUTER_PRESETS": "True",
    "LITELLM_LOCAL_POLICY_TEMPLATES": "True",
    "LITELLM_MODE": "PRODUCTION",
    "LITELLM_DONT_SHOW_FEEDBACK_BOX": "True",
}


def litellm_config(entries: list[dict[str, Any]]) -> str:
    """A LiteLLM config file (JSON is YAML) with the given model entries."""
    return json.dumps(
        {
            "model_list": entries,
            "general_settings": {"master_key": "os.environ/LITELLM_MASTER_KEY"},
        },
        indent=1,
    )


@contextlib.contextmanager
def litellm(config: Path) -> Iterator[str]:
    """A real LiteLLM proxy (``scripts/install-litellm.sh``) on ``config``;
    yields its root URL."""
    if not LITELLM_BIN.exists():
        raise RuntimeError(
            f"LiteLLM's tool environment is missing ({LITELLM_BIN}): "
            "run `bash scripts/install-litellm.sh` first"
        )
    port = free_ports(1)[0]
    env = {
        **os.environ,
        **LITELLM_OFFLINE_ENV,
        "LITELLM_MASTER_KEY": LITELLM_MASTER_KEY,
    }
    for name in ("DATABASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(name, None)
    log = config.with_suffix(".log")
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                str(LITELLM_BIN),
                "--config",
                str(config),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            cwd=config.parent,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"

    def live() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"LiteLLM exited early:\n{log.read_text()[-3000:]}")
        try:
            return httpx.get(f"{url}/health/liveliness", timeout=2).is_success
        except httpx.TransportError:
            return False

    try:
        wait_until(live, 120, "LiteLLM")
        yield url
    finally:
        stop(process, timeout=20)
