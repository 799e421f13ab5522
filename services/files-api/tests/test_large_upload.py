"""A 100 MiB upload streams through the server in bounded memory."""

from __future__ import annotations

import hashlib
import random
import sys
from collections.abc import Iterator

import httpx
import pytest

MIB = 1024 * 1024
SIZE = 100 * MIB
PART = 8 * MIB
BOUNDARY = "lgos-large-upload"
# Growth of the server's peak RSS allowed while it moves 100 MiB each way:
# a part buffer and its copy (2 x 8 MiB) plus transport buffers fit with room;
# holding the file would need 100 MiB.
MAX_GROWTH = 48 * MIB


def _payload() -> Iterator[bytes]:
    """100 MiB of deterministic, non-repeating-per-MiB data, made on the fly."""
    block = random.Random(9).randbytes(MIB)
    for index in range(SIZE // MIB):
        yield index.to_bytes(8, "big") + block[8:]


def _body(digest: hashlib._Hash) -> Iterator[bytes]:
    yield (
        f"--{BOUNDARY}\r\n"
        'Content-Disposition: form-data; name="purpose"\r\n\r\nuser_data\r\n'
        f"--{BOUNDARY}\r\n"
        'Content-Disposition: form-data; name="file"; filename="large.bin"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    for chunk in _payload():
        digest.update(chunk)
        yield chunk
    yield f"\r\n--{BOUNDARY}--\r\n".encode()


def _length() -> int:
    return sum(len(part) for part in _body(hashlib.sha256()))


def test_100_mib_upload_and_download_keep_server_memory_bounded(
    launch, request: pytest.FixtureRequest
) -> None:
    server = launch(MAX_UPLOAD_BYTES=str(200 * MIB), PART_SIZE_BYTES=str(PART))
    headers = {"Authorization": "Bearer sk-test-059"}
    with httpx.Client(base_url=server.url, headers=headers, timeout=120) as http:
        # Warm up: imports, connection pools and first-use allocations.
        warm = http.post(
            "/v1/files",
            files={"file": ("warm.bin", b"w" * (PART + 1))},
            data={"purpose": "user_data"},
        ).json()
        assert http.get(f"/v1/files/{warm['id']}/content").content == b"w" * (PART + 1)
        server.reset_peak_rss()
        baseline = server.memory_kib("VmRSS") * 1024

        sent = hashlib.sha256()
        created = http.post(
            "/v1/files",
            headers={
                "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
                "Content-Length": str(_length()),
            },
            content=_body(sent),
        )
        upload_peak = server.memory_kib("VmHWM") * 1024

        assert created.status_code == 200, created.text
        assert created.json()["bytes"] == SIZE
        received = hashlib.sha256()
        size = 0
        with http.stream("GET", f"/v1/files/{created.json()['id']}/content") as body:
            assert body.headers["content-length"] == str(SIZE)
            for chunk in body.iter_bytes():
                received.update(chunk)
                size += len(chunk)
        download_peak = server.memory_kib("VmHWM") * 1024

    assert size == SIZE
    assert received.digest() == sent.digest()
    upload_growth = upload_peak - baseline
    download_growth = download_peak - baseline
    request.node.user_properties.append(("peak_rss_growth_bytes", download_growth))
    report = (
        f"\n100 MiB through the server: baseline RSS {baseline / MIB:.1f} MiB, "
        f"peak growth {upload_growth / MIB:.1f} MiB on upload, "
        f"{download_growth / MIB:.1f} MiB after download\n"
    )
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        sys.stdout.write(report)
    assert upload_growth < MAX_GROWTH, report
    assert download_growth < MAX_GROWTH, report
