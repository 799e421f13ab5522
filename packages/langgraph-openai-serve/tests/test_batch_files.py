"""The Batch API's Files API client on a real Files API: a result file is
uploaded from its spool in small reads (never read whole into memory), and
the uploads of one batch file are found again by name."""

from __future__ import annotations

import io
import tempfile
from typing import Any

import pytest
from batch_fixtures import SERVICE_KEY, files_client
from langgraph_openai_serve.batches.files import FilesClient
from lgos_testkit import FilesApi

pytestmark = pytest.mark.anyio

SPOOLED = 256 * 1024
"""Bytes the spool keeps in memory before it moves to disk (the batch's
finalize keeps 8 MiB; a smaller one makes a small test take the disk path)."""


class RecordingSpool(tempfile.SpooledTemporaryFile):  # type: ignore[type-arg]
    """The finalize step's spool, noting the size of every read."""

    def __init__(self) -> None:
        super().__init__(max_size=SPOOLED)
        self.reads: list[int] = []

    def read(self, *args: Any) -> Any:
        self.reads.append(args[0] if args and args[0] is not None else -1)
        return super().read(*args)


@pytest.fixture
async def service(files_api: FilesApi) -> Any:
    client = FilesClient(files_api.openai_url, SERVICE_KEY)
    yield client
    await client.close()


async def test_a_result_file_is_uploaded_in_small_reads_not_whole(
    service: FilesClient, files_api: FilesApi
) -> None:
    line = b'{"custom_id": "r", "response": {"body": "' + b"x" * 1000 + b'"}}\n'
    content = line * 2048  # about 2 MiB: past the spool's memory, on disk
    spool = RecordingSpool()
    spool.write(content)
    spool.seek(0)

    file_id = await service.upload("default", "results.jsonl", spool, None)

    assert spool._rolled  # type: ignore[attr-defined]
    assert spool.reads, "the upload never read the spool"
    assert -1 not in spool.reads  # no read to the end
    assert max(spool.reads) <= 1024 * 1024  # no read of the whole
    owner = files_client(files_api, "default")
    try:
        assert (await owner.files.content(file_id)).content == content
    finally:
        await owner.files.delete(file_id)
        await owner.close()
    spool.close()


async def test_uploads_are_found_by_name_newest_first_and_deleted(
    service: FilesClient,
) -> None:
    before = await service.upload("alice", "batch_x_out.jsonl", io.BytesIO(b"a"), None)
    other = await service.upload("alice", "batch_y_out.jsonl", io.BytesIO(b"bb"), None)
    again = await service.upload("alice", "batch_x_out.jsonl", io.BytesIO(b"ccc"), None)
    since = 0

    found = await service.uploads_named("alice", "batch_x_out.jsonl", since)
    bobs = await service.uploads_named("bob", "batch_x_out.jsonl", since)
    for file_id in (before, other, again):
        await service.delete(file_id, "alice")
    await service.delete(again, "alice")  # gone already: nothing to do

    assert [(u.id, u.bytes) for u in found] == [(again, 3), (before, 1)]
    assert bobs == []
    assert await service.uploads_named("alice", "batch_x_out.jsonl", since) == []
