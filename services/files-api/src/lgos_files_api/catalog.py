"""The file catalog: where each file's bytes and metadata live in the bucket.

The service needs nothing but the bucket::

    files/{owner}/blob/{file_id}                 the bytes, with their content type
    files/{owner}/meta/{file_id}.json            the FileRecord, written last
    expiry/{expires_at:012d}/{owner}/{file_id}   an empty marker per expiring file

Only metadata objects decide what exists, and one is written only after its
bytes are complete: a crash in between leaves bytes nobody can see, never a
listed file without content. Owners are a key prefix, so another owner's file
is simply not there. Expiry markers sort by time, so a sweep reads only the
ones that are due.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Literal

from pydantic import TypeAdapter, ValidationError

from lgos_files_api.errors import FileMissingError
from lgos_files_api.records import FileRecord, is_file_id
from lgos_files_api.storage import ObjectReader, ObjectStore, ObjectWriter

logger = logging.getLogger("lgos_files_api")

_RECORD = TypeAdapter(FileRecord)
_EXPIRY = "expiry/"
# Metadata objects fetched at once while filling a page.
_FETCH_WINDOW = 16
# Expired files removed per sweep; the next sweep takes the rest.
_SWEEP_BATCH = 1000


@dataclass(frozen=True, slots=True)
class Page:
    records: tuple[FileRecord, ...]
    has_more: bool


@dataclass(frozen=True, slots=True)
class _Due:
    owner: str
    file_id: str
    marker: str


def _meta_prefix(owner: str) -> str:
    return f"files/{owner}/meta/"


def _meta_key(owner: str, file_id: str) -> str:
    return f"{_meta_prefix(owner)}{file_id}.json"


def _blob_key(owner: str, file_id: str) -> str:
    return f"files/{owner}/blob/{file_id}"


def _expiry_key(expires_at: int, owner: str, file_id: str) -> str:
    return f"{_EXPIRY}{expires_at:012d}/{owner}/{file_id}"


class FileCatalog:
    """Files of every owner, over one ``ObjectStore``."""

    def __init__(self, store: ObjectStore, *, part_size: int) -> None:
        self.store = store
        self._part_size = part_size

    def blob_writer(self, owner: str, file_id: str, content_type: str) -> ObjectWriter:
        """Where an upload streams its bytes before ``commit``."""
        return self.store.writer(
            _blob_key(owner, file_id), content_type, self._part_size
        )

    async def commit(self, record: FileRecord) -> None:
        """Make a file whose bytes are complete visible, with its record."""
        if record.expires_at is not None:
            # Before the metadata, so a crash leaves the sweep a way to the bytes.
            marker = _expiry_key(record.expires_at, record.owner, record.id)
            await self.store.put(marker, b"", "application/octet-stream")
        await self.store.put(
            _meta_key(record.owner, record.id),
            _RECORD.dump_json(record),
            "application/json",
        )

    async def get(self, owner: str, file_id: str, now: float) -> FileRecord:
        record = await self._load(owner, file_id) if is_file_id(file_id) else None
        if record is None or record.expired(now):
            raise FileMissingError(file_id)
        return record

    async def open_content(self, record: FileRecord) -> ObjectReader:
        reader = await self.store.open(_blob_key(record.owner, record.id))
        if reader is None:
            raise FileMissingError(record.id)
        return reader

    async def delete(self, owner: str, file_id: str, now: float) -> None:
        record = await self.get(owner, file_id, now)
        await self._remove(owner, file_id, record.expires_at)

    async def page(
        self,
        owner: str,
        now: float,
        *,
        limit: int,
        order: Literal["asc", "desc"],
        after: str | None = None,
        purpose: str | None = None,
    ) -> Page:
        """Up to ``limit`` live files of ``owner``, oldest or newest first."""
        ids: list[str] = []
        prefix = _meta_prefix(owner)
        async for key in self.store.keys(prefix):
            file_id = key[len(prefix) :].removesuffix(".json")
            if is_file_id(file_id):
                ids.append(file_id)
        # Ids start with their creation time, so key order is creation order.
        if order == "desc":
            ids.reverse()
        if after is not None:
            ids = [i for i in ids if (i > after if order == "asc" else i < after)]
        found: list[FileRecord] = []
        start = 0
        # One record past the limit tells whether there is a next page.
        while start < len(ids) and len(found) <= limit:
            window = min(_FETCH_WINDOW, limit + 1 - len(found))
            batch = ids[start : start + window]
            start += window
            for record in await self._load_many(owner, batch):
                if record is None or record.expired(now):
                    continue
                if purpose is None or record.purpose == purpose:
                    found.append(record)
        return Page(tuple(found[:limit]), has_more=len(found) > limit)

    async def sweep(self, now: float) -> int:
        """Delete the bytes and records of files that have expired by ``now``."""
        due: list[_Due] = []
        async with aclosing(self.store.keys(_EXPIRY)) as markers:
            async for marker in markers:
                parts = marker[len(_EXPIRY) :].split("/")
                if len(parts) != 3 or not parts[0].isdigit():
                    continue
                if int(parts[0]) > now or len(due) >= _SWEEP_BATCH:
                    break
                due.append(_Due(owner=parts[1], file_id=parts[2], marker=marker))
        for item in due:
            await self._remove(item.owner, item.file_id, None)
            await self.store.delete(item.marker)
        if due:
            logger.info("sweep.deleted count=%d", len(due))
        return len(due)

    async def _remove(self, owner: str, file_id: str, expires_at: int | None) -> None:
        # Metadata first: the file vanishes at once; a crash after it leaves
        # only invisible bytes (or a marker the next sweep finishes).
        await self.store.delete(_meta_key(owner, file_id))
        await self.store.delete(_blob_key(owner, file_id))
        if expires_at is not None:
            await self.store.delete(_expiry_key(expires_at, owner, file_id))

    async def _load_many(
        self, owner: str, file_ids: Sequence[str]
    ) -> list[FileRecord | None]:
        return list(await asyncio.gather(*(self._load(owner, i) for i in file_ids)))

    async def _load(self, owner: str, file_id: str) -> FileRecord | None:
        data = await self.store.read(_meta_key(owner, file_id))
        if data is None:
            return None
        try:
            record = _RECORD.validate_json(data)
        except ValidationError:
            logger.warning("catalog.bad_record owner=%s id=%s", owner, file_id)
            return None
        # The prefix already scopes owners; this guards against a copied object.
        return record if record.owner == owner and record.id == file_id else None
