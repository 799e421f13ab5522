"""Memory bounded by the upload caps, not by the number of senders: a real
Files API process, its peak memory (``VmHWM``) read before and after many
uploads that each stop with a part-sized buffer in the server.

Each hostile upload sends a bit less than one S3 part of its file and then
nothing more, so a server that accepts it holds a part buffer for as long as
the sender likes. The server has read everything sent when the kernel holds
nothing unread on its sockets (``/proc/net/tcp``), the moment memory is read.
"""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import openai
import pytest
from conftest import MIB, TENANTS, BucketView, FilesServer, Tenant
from lgos_testkit import wait_until
from openai import OpenAI

PART = 5 * MIB
HELD = PART - 64 * 1024
"""File bytes each hostile upload sends: just under a part, all buffered."""
SENDERS = 30
BOUNDARY = "lgos-hostile-upload"
SLACK = 16 * MIB
"""Room for transport buffers and allocator slack on top of the buffers."""


class StalledUpload:
    """An upload over a real socket that sends ``held`` bytes of its file,
    announces more (Content-Length) and then sends nothing."""

    def __init__(self, server: FilesServer, tenant: Tenant, held: int) -> None:
        head = (
            f"--{BOUNDARY}\r\n"
            'Content-Disposition: form-data; name="purpose"\r\n\r\nuser_data\r\n'
            f"--{BOUNDARY}\r\n"
            'Content-Disposition: form-data; name="file"; filename="slow.bin"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        host, port = httpx.URL(server.url).host, httpx.URL(server.url).port
        assert port is not None
        request = (
            "POST /v1/files HTTP/1.1\r\n"
            f"Host: {host}:{port}\r\n"
            f"Authorization: Bearer {tenant.key}\r\n"
            f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
            f"Content-Length: {len(head) + 2 * held}\r\n\r\n"
        ).encode()
        self.sock = socket.create_connection((host, port))
        self.sock.sendall(request + head + b"s" * held)

    def answer(self, timeout: float) -> bytes:
        """What the server answered, once it closed the connection."""
        self.sock.settimeout(timeout)
        received = b""
        while chunk := self.sock.recv(65536):
            received += chunk
        return received

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def stalled() -> Iterator[Callable[[FilesServer, Tenant, int], StalledUpload]]:
    opened: list[StalledUpload] = []

    def start(server: FilesServer, tenant: Tenant, held: int = HELD) -> StalledUpload:
        upload = StalledUpload(server, tenant, held)
        opened.append(upload)
        return upload

    yield start
    for upload in opened:
        upload.close()


def _unread_bytes(port: int) -> int:
    """Bytes the kernel holds for the server's accepted sockets on ``port``
    that the server has not read yet (``rx_queue`` of ``/proc/net/tcp``)."""
    unread = 0
    with open("/proc/net/tcp") as table:
        next(table)
        for row in table:
            fields = row.split()
            local_port = int(fields[1].rsplit(":", 1)[1], 16)
            if local_port == port:
                unread += int(fields[4].split(":")[1], 16)
    return unread


def _read_everything(server: FilesServer) -> None:
    port = httpx.URL(server.url).port
    assert port is not None
    wait_until(lambda: _unread_bytes(port) == 0, 60, "the server to read every byte")


def _warm_up(server: FilesServer) -> int:
    """An upload of more than a part (imports, pools, first allocations);
    then the peak is reset. The resident size before the test's uploads."""
    with OpenAI(api_key=TENANTS[-1].key, base_url=f"{server.url}/v1") as client:
        client.files.create(file=("warm.bin", b"w" * (PART + 1)), purpose="user_data")
    server.reset_peak_rss()
    return server.memory_kib("VmRSS") * 1024


def _report(request: pytest.FixtureRequest, text: str) -> None:
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        sys.stdout.write(f"\n{text}\n")


def test_one_owners_parallel_uploads_past_its_cap_are_429_and_hold_no_memory(
    launch, stalled, request: pytest.FixtureRequest
) -> None:
    per_owner = 2
    server = launch(
        PART_SIZE_BYTES=str(PART),
        MAX_UPLOADS="8",
        MAX_UPLOADS_PER_OWNER=str(per_owner),
        UPLOAD_IDLE_TIMEOUT="120",
    )
    baseline = _warm_up(server)
    alice, bob = TENANTS[0], TENANTS[1]

    for _ in range(SENDERS):
        stalled(server, alice)
    _read_everything(server)
    growth = server.memory_kib("VmHWM") * 1024 - baseline
    bound = per_owner * 2 * PART + SLACK
    _report(
        request,
        f"{SENDERS} stalled uploads of one owner: peak RSS growth "
        f"{growth / MIB:.1f} MiB (bound {bound / MIB:.0f} MiB)",
    )
    base_url = f"{server.url}/v1"
    with (
        OpenAI(api_key=alice.key, base_url=base_url, max_retries=0) as alices,
        pytest.raises(openai.RateLimitError) as refused,
    ):
        alices.files.create(file=("one-more.txt", b"x"), purpose="user_data")
    with OpenAI(api_key=bob.key, base_url=base_url, max_retries=0) as bobs_sdk:
        bobs = bobs_sdk.files.create(file=("bob.txt", b"x"), purpose="user_data")

    assert growth < bound
    error = refused.value.body
    assert isinstance(error, dict)
    assert (error["type"], error["code"]) == ("requests", "rate_limit_exceeded")
    assert refused.value.response.headers["retry-after"] == "2"
    assert bobs.bytes == 1  # another owner's upload is not held back


def test_many_owners_uploads_past_the_process_cap_are_429_and_hold_no_memory(
    launch, stalled, request: pytest.FixtureRequest
) -> None:
    total = 4
    server = launch(
        PART_SIZE_BYTES=str(PART),
        MAX_UPLOADS=str(total),
        MAX_UPLOADS_PER_OWNER="2",
        UPLOAD_IDLE_TIMEOUT="120",
    )
    baseline = _warm_up(server)

    for tenant in TENANTS[:SENDERS]:
        stalled(server, tenant)
    _read_everything(server)
    growth = server.memory_kib("VmHWM") * 1024 - baseline
    newcomer = TENANTS[SENDERS]
    refused = httpx.post(
        f"{server.url}/v1/files",
        headers=newcomer.headers,
        files={"file": ("one-more.txt", b"x")},
        data={"purpose": "user_data"},
        timeout=30,
    )

    bound = total * 2 * PART + SLACK
    _report(
        request,
        f"{SENDERS} stalled uploads of {SENDERS} owners: peak RSS growth "
        f"{growth / MIB:.1f} MiB (bound {bound / MIB:.0f} MiB)",
    )
    assert growth < bound
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limit_exceeded"
    assert refused.headers["retry-after"] == "2"


def test_a_sender_that_stops_loses_its_slot_and_leaves_nothing_behind(
    launch, s3, stalled
) -> None:
    server = launch(
        PART_SIZE_BYTES=str(PART),
        MAX_UPLOADS_PER_OWNER="1",
        UPLOAD_IDLE_TIMEOUT="1",
    )
    carol = TENANTS[2]
    # More than a part: one part went to S3 as a multipart upload, the rest
    # waits in the buffer when the sender stops.
    upload = stalled(server, carol, PART + MIB)

    answer = upload.answer(timeout=30)
    with OpenAI(api_key=carol.key, base_url=f"{server.url}/v1", max_retries=0) as sdk:
        after = sdk.files.create(file=("after.txt", b"x"), purpose="user_data")
        listed = [f.filename for f in sdk.files.list()]

    status_line, _, rest = answer.partition(b"\r\n")
    assert status_line == b"HTTP/1.1 408 Request Timeout"
    assert b'"code":"upload_timeout"' in rest.replace(b" ", b"")
    assert after.bytes == 1  # the owner's one slot is free again
    assert listed == ["after.txt"]
    assert BucketView(s3, server.bucket).pending_uploads(f"files/{carol.owner}/") == []


def test_the_sdks_own_retry_gets_an_upload_through_once_a_slot_is_free(
    server: FilesServer, stalled, new_tenant
) -> None:
    tenant = new_tenant()
    holding = [stalled(server, tenant, 1024) for _ in range(4)]  # the default cap
    _read_everything(server)
    refusals = threading.Event()

    def saw(response: httpx.Response) -> None:
        if response.status_code == 429:
            refusals.set()

    http = httpx.Client(event_hooks={"response": [saw]})
    client = OpenAI(
        api_key=tenant.key,
        base_url=f"{server.url}/v1",
        max_retries=3,
        http_client=http,
    )
    with ThreadPoolExecutor(max_workers=1) as pool, http, client:
        upload = pool.submit(
            client.files.create, file=("late.txt", b"late"), purpose="user_data"
        )
        assert refusals.wait(timeout=30)
        for one in holding:  # the senders leave: their slots are free
            one.close()
        created = upload.result(timeout=60)

    assert created.bytes == 4
