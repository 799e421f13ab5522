"""Upload edge cases over raw HTTP: limits, cut-off bodies, concurrency, crashes."""

from __future__ import annotations

import hashlib
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import httpx
import openai
import pytest
from lgos_files_api.records import new_file_id
from openai import OpenAI

MIB = 1024 * 1024
BOUNDARY = "lgos-test-boundary"


def multipart_head(filename: str = "big.bin") -> bytes:
    return (
        f"--{BOUNDARY}\r\n"
        'Content-Disposition: form-data; name="purpose"\r\n\r\n'
        "user_data\r\n"
        f"--{BOUNDARY}\r\n"
        f'Content-Disposition: form-data; name="file"; filename="{filename}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()


def multipart_tail() -> bytes:
    return f"\r\n--{BOUNDARY}--\r\n".encode()


def body_chunks(size: int, chunk: int = MIB) -> Iterator[bytes]:
    """A whole multipart body around ``size`` bytes, generated as it is sent."""
    yield multipart_head()
    block = bytes(range(256)) * (chunk // 256)
    sent = 0
    while sent < size:
        piece = block[: min(chunk, size - sent)]
        sent += len(piece)
        yield piece
    yield multipart_tail()


CONTENT_TYPE = f"multipart/form-data; boundary={BOUNDARY}"


def test_oversize_declared_length_answers_413_before_storing(
    http: httpx.Client, tenant, bucket
) -> None:
    response = http.post(
        "/v1/files",
        headers=tenant.headers | {"Content-Type": CONTENT_TYPE},
        content=b"".join(body_chunks(13 * MIB)),
    )

    assert response.status_code == 413
    error = response.json()["error"]
    assert error["param"] == "file"
    assert error["code"] == "file_too_large"
    assert str(12 * MIB) in error["message"]
    assert bucket.owner_keys(tenant.owner) == []


def test_oversize_streamed_body_answers_413_and_leaves_nothing(
    http: httpx.Client, tenant, bucket, eventually
) -> None:
    # A generator body goes out chunked, with no length to judge up front: the
    # limit trips mid-stream, after parts have already gone to S3.
    response = http.post(
        "/v1/files",
        headers=tenant.headers | {"Content-Type": CONTENT_TYPE},
        content=body_chunks(13 * MIB),
    )

    assert response.status_code == 413
    assert response.json()["error"]["code"] == "file_too_large"
    eventually(lambda: bucket.pending_uploads(f"files/{tenant.owner}/") == [])
    assert bucket.owner_keys(tenant.owner) == []


def test_upload_at_exactly_the_limit_is_accepted(http: httpx.Client, tenant) -> None:
    response = http.post(
        "/v1/files",
        headers=tenant.headers | {"Content-Type": CONTENT_TYPE},
        content=body_chunks(12 * MIB),
    )

    assert response.status_code == 200
    assert response.json()["bytes"] == 12 * MIB


def test_cut_off_upload_leaves_no_object_and_no_listing(
    server, tenant, bucket, client: OpenAI, eventually
) -> None:
    address = urlsplit(server.url)
    prefix = f"files/{tenant.owner}/"
    head = multipart_head()
    # Within the session server's 12 MiB limit, so the upload really starts.
    declared = len(head) + 11 * MIB + len(multipart_tail())
    request = (
        "POST /v1/files HTTP/1.1\r\n"
        f"Host: {address.netloc}\r\n"
        f"Authorization: Bearer {tenant.key}\r\n"
        f"Content-Type: {CONTENT_TYPE}\r\n"
        f"Content-Length: {declared}\r\n\r\n"
    ).encode()
    with socket.create_connection((address.hostname, address.port)) as sock:
        sock.sendall(request + head)
        for _ in range(8):  # 8 of the 11 MiB promised
            sock.sendall(b"\xab" * MIB)
        # Parts are on their way to S3 before the client vanishes.
        eventually(lambda: bucket.pending_uploads(prefix) != [], what="a part")
    # Closing the socket mid-body is the cut-off.

    eventually(lambda: bucket.pending_uploads(prefix) == [], what="abort")
    assert bucket.owner_keys(tenant.owner) == []
    assert client.files.list().data == []


def test_truncated_body_without_closing_boundary_answers_400(
    http: httpx.Client, tenant, bucket
) -> None:
    response = http.post(
        "/v1/files",
        headers=tenant.headers | {"Content-Type": CONTENT_TYPE},
        content=multipart_head() + b"half a file",
    )

    assert response.status_code == 400
    assert "closing boundary" in response.json()["error"]["message"]
    assert bucket.owner_keys(tenant.owner) == []


def test_concurrent_uploads_all_land_intact(client: OpenAI) -> None:
    # As many as one owner may send at once (MAX_UPLOADS_PER_OWNER's default).
    payloads = [bytes([n]) * (6 * MIB + n) for n in range(4)]

    def upload(number: int) -> str:
        created = client.files.create(
            file=(f"part-{number}.bin", payloads[number]), purpose="user_data"
        )
        return created.id

    with ThreadPoolExecutor(max_workers=4) as pool:
        ids = list(pool.map(upload, range(4)))

    assert len(set(ids)) == 4
    for number, file_id in enumerate(ids):
        content = client.files.content(file_id).read()
        assert (
            hashlib.sha256(content).digest()
            == hashlib.sha256(payloads[number]).digest()
        )
    assert sorted(f.id for f in client.files.list()) == sorted(ids)


def test_bytes_without_metadata_stay_invisible(client: OpenAI, tenant, bucket) -> None:
    # What a crash between writing the bytes and the metadata leaves behind.
    orphan = new_file_id(1_800_000_000)
    bucket.put(f"files/{tenant.owner}/blob/{orphan}", b"orphaned bytes")

    assert client.files.list().data == []
    with pytest.raises(openai.NotFoundError):
        client.files.retrieve(orphan)
    with pytest.raises(openai.NotFoundError):
        client.files.content(orphan)


def test_filenames_are_sanitized(http: httpx.Client, tenant) -> None:
    cases = {
        "../../etc/passwd": "passwd",
        "C:\\Users\\me\\report.pdf": "report.pdf",
        "evil\u202etxt.exe": "eviltxt.exe",
        "tab\tand\nnewline.txt": "tab and newline.txt",
        "..": "file",
        "x" * 300 + ".txt": "x" * 251 + ".txt",
        "résumé.pdf": "résumé.pdf",
    }
    for raw, expected in cases.items():
        response = http.post(
            "/v1/files",
            headers=tenant.headers,
            files={"file": (raw, b"data")},
            data={"purpose": "user_data"},
        )
        assert response.status_code == 200, raw
        assert response.json()["filename"] == expected, raw
