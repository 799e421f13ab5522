"""The graphs' Files API client: OpenAI's ``/v1/files`` over plain HTTP, for
the caller.

A graph reads and writes files for the tenant its request runs for
(``GraphRequest.scope``), never for one owner every tenant shares: the key is
a service key of LGOS's Files API, and every call names the owner it acts for
in ``X-Lgos-Owner``, as LGOS's Batch API does. A ``file_id`` comes from the
client, so it is checked against the id format before it goes into a URL: a
path like ``../../health`` never reaches the Files API's other routes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import httpx

OWNER_HEADER = "X-Lgos-Owner"
# OpenAI's ids and LGOS's Files API's alike: ``file-`` and a token of letters,
# digits, ``_`` or ``-``; nothing a URL path would read as a separator.
_FILE_ID = re.compile(r"file-[A-Za-z0-9_-]{1,128}")


class FilesError(Exception):
    """The Files API refused or failed a request."""


@dataclass(frozen=True, slots=True)
class StoredFile:
    id: str
    filename: str
    bytes: int


def checked_file_id(file_id: str) -> str:
    """``file_id`` when it has the form of a file id, else ``FilesError``."""
    if not _FILE_ID.fullmatch(file_id):
        shown = file_id if len(file_id) <= 40 else file_id[:40] + "..."
        raise FilesError(f"{shown!r} is not a file id")
    return file_id


class FilesClient:
    """Read and write an owner's files in LGOS's Files API with a service key."""

    def __init__(self, base_url: str, api_key: str, *, timeout: float = 60) -> None:
        self.base_url = base_url.rstrip("/")
        self._key = api_key
        self.timeout = timeout

    def _headers(self, owner: str | None) -> dict[str, str]:
        if not owner:
            raise FilesError("this run has no tenant to act for")
        return {"Authorization": f"Bearer {self._key}", OWNER_HEADER: owner}

    async def retrieve(self, file_id: str, *, owner: str | None) -> StoredFile:
        path = f"/files/{checked_file_id(file_id)}"
        return _stored(await self._json("GET", path, owner))

    async def content(
        self, file_id: str, *, owner: str | None, max_bytes: int
    ) -> bytes:
        """The file's bytes; ``FilesError`` when it is larger than ``max_bytes``."""
        url = f"{self.base_url}/files/{checked_file_id(file_id)}/content"
        headers = self._headers(owner)
        data = bytearray()
        try:
            async with (
                httpx.AsyncClient(timeout=self.timeout, headers=headers) as http,
                http.stream("GET", url) as response,
            ):
                if response.status_code != 200:
                    await response.aread()
                    raise FilesError(_message(response))
                declared = int(response.headers.get("content-length") or 0)
                if declared > max_bytes:
                    raise FilesError(f"{file_id} is larger than {max_bytes} bytes")
                # Read to the end (no early exit): httpx's body reader is a
                # chain of generators that leaving early would leave to the
                # garbage collector. Beyond the limit nothing more is kept.
                async for chunk in response.aiter_bytes():
                    if len(data) <= max_bytes:
                        data += chunk
                if len(data) > max_bytes:
                    raise FilesError(f"{file_id} is larger than {max_bytes} bytes")
        except httpx.HTTPError as exc:
            raise FilesError(f"reading {file_id} failed: {exc}") from exc
        return bytes(data)

    async def upload(
        self,
        filename: str,
        data: bytes,
        content_type: str,
        *,
        owner: str | None,
        purpose: str = "user_data",
    ) -> StoredFile:
        body = await self._json(
            "POST",
            "/files",
            owner,
            files={"file": (filename, data, content_type)},
            data={"purpose": purpose},
        )
        return _stored(body)

    async def _json(
        self, method: str, path: str, owner: str | None, **kwargs: Any
    ) -> Any:
        headers = self._headers(owner)
        try:
            async with httpx.AsyncClient(timeout=self.timeout, headers=headers) as http:
                response = await http.request(
                    method, f"{self.base_url}{path}", **kwargs
                )
        except httpx.HTTPError as exc:
            raise FilesError(
                f"the Files API at {self.base_url} is unreachable: {exc}"
            ) from exc
        if response.status_code != 200:
            raise FilesError(_message(response))
        return response.json()


def _stored(body: Any) -> StoredFile:
    if not isinstance(body, dict) or not isinstance(body.get("id"), str):
        raise FilesError("the Files API answered without a file object")
    return StoredFile(
        id=body["id"],
        filename=str(body.get("filename") or body["id"]),
        bytes=int(body.get("bytes") or 0),
    )


def _message(response: httpx.Response) -> str:
    try:
        error = response.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        error = response.text[:200]
    return f"the Files API answered {response.status_code}: {error}"
