"""The graphs' Files API client: OpenAI's ``/v1/files`` over plain HTTP."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx


class FilesError(Exception):
    """The Files API refused or failed a request."""


@dataclass(frozen=True, slots=True)
class StoredFile:
    id: str
    filename: str
    bytes: int


class FilesClient:
    """Read and write files in an OpenAI-compatible Files API."""

    def __init__(self, base_url: str, api_key: str, *, timeout: float = 60) -> None:
        self.base_url = base_url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {api_key}"}
        self.timeout = timeout

    async def retrieve(self, file_id: str) -> StoredFile:
        body = await self._json("GET", f"/files/{file_id}")
        return _stored(body)

    async def content(self, file_id: str, *, max_bytes: int) -> bytes:
        """The file's bytes; ``FilesError`` when it is larger than ``max_bytes``."""
        url = f"{self.base_url}/files/{file_id}/content"
        data = bytearray()
        try:
            async with (
                httpx.AsyncClient(timeout=self.timeout, headers=self._headers) as http,
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
        purpose: str = "user_data",
    ) -> StoredFile:
        body = await self._json(
            "POST",
            "/files",
            files={"file": (filename, data, content_type)},
            data={"purpose": purpose},
        )
        return _stored(body)

    async def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            async with httpx.AsyncClient(
                timeout=self.timeout, headers=self._headers
            ) as http:
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
