"""The Files API as the Batch API uses it: an OpenAI-compatible client.

The core never imports the Files API service: it talks to it over HTTP with
the official ``openai`` SDK, as any client would, with a service key
(``LGOS_BATCH_FILES_API_KEY``) that acts for the batch's tenant
(``X-Lgos-Owner``): the tenant's scope names the Files API owner whose input
is read and who owns the output and error files.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import IO, Any, cast

OWNER_HEADER = "X-Lgos-Owner"


@dataclass(frozen=True, slots=True)
class InputFile:
    purpose: str
    bytes: int


@dataclass(frozen=True, slots=True)
class Upload:
    id: str
    bytes: int


class FileNotFound(LookupError):
    """The file does not exist for this owner (or expired)."""


class FilesClient:
    """Reads input files and writes result files for one owner at a time."""

    def __init__(self, base_url: str, api_key: str) -> None:
        from openai import AsyncOpenAI

        self._client = AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=3)

    async def close(self) -> None:
        await self._client.close()

    async def describe(self, file_id: str, owner: str) -> InputFile:
        """The file's purpose and size.

        Raises:
            FileNotFound: no such file of ``owner``.
        """
        import openai

        try:
            found = await self._client.files.retrieve(
                file_id, extra_headers=_acting_for(owner)
            )
        except openai.NotFoundError:
            raise FileNotFound(file_id) from None
        return InputFile(purpose=found.purpose, bytes=found.bytes)

    async def content(self, file_id: str, owner: str) -> AsyncIterator[bytes]:
        """The file's bytes as they arrive, in chunks of the transport's
        size (never the whole file, nor a whole line, at once)."""
        import openai

        streamed = self._client.files.with_streaming_response.content(
            file_id, extra_headers=_acting_for(owner)
        )
        try:
            async with streamed as response:
                async for chunk in response.iter_bytes():
                    yield chunk
        except openai.NotFoundError:
            raise FileNotFound(file_id) from None

    async def upload(
        self,
        owner: str,
        filename: str,
        content: IO[bytes],
        expires_after: dict[str, Any] | None,
    ) -> str:
        """Store ``content`` as the owner's ``batch_output`` file; its id."""
        from openai import omit

        created = await self._client.files.create(
            file=(filename, content, "application/jsonl"),
            purpose=cast(Any, "batch_output"),
            expires_after=cast(Any, expires_after) if expires_after else omit,
            extra_headers=_acting_for(owner),
        )
        return created.id

    async def uploads_named(
        self, owner: str, filename: str, since: int
    ) -> list[Upload]:
        """The owner's ``batch_output`` files called ``filename`` created at
        or after ``since`` (Unix seconds), newest first: the listing is read
        newest first and stops at the first older file."""
        found: list[Upload] = []
        listing = self._client.files.list(
            purpose="batch_output",
            order="desc",
            limit=100,
            extra_headers=_acting_for(owner),
        )
        async for stored in listing:
            if stored.created_at < since:
                break
            if stored.filename == filename:
                found.append(Upload(stored.id, stored.bytes))
        return found

    async def delete(self, file_id: str, owner: str) -> None:
        """Delete the owner's file (gone already: nothing to do)."""
        import openai

        with contextlib.suppress(openai.NotFoundError):
            await self._client.files.delete(file_id, extra_headers=_acting_for(owner))


def _acting_for(owner: str) -> dict[str, str]:
    return {OWNER_HEADER: owner}
