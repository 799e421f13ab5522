"""Files: attachments up to the Files API, ``display_file`` downloads back.

The UI offers the client function ``display_file`` (strict arguments) only to
graphs that list it in ``lgos.client_tools``. When a graph calls it, the UI
downloads the file from the Files API with its own key, shows it, and answers
with a small ``function_call_output`` (a JSON status, never the bytes or a
URL). A failed download is answered too, with the reason, so the graph can
tell the user.
"""

from __future__ import annotations

import json
import mimetypes
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Final, Literal

from openai import AsyncOpenAI, OpenAIError

from lgos_chainlit.closing import run_out
from lgos_chainlit.ledger import Item, function_output

DISPLAY_FILE = "display_file"
UPLOAD_PURPOSE: Final[Literal["user_data"]] = "user_data"

DISPLAY_FILE_TOOL: Item = {
    "type": "function",
    "name": DISPLAY_FILE,
    "description": (
        "Show the user a file stored in the Files API (an image inline, any "
        "other file as a download). Call it after uploading the file."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "file_id": {"type": "string", "description": "The Files API file id."},
            "filename": {
                "type": "string",
                "description": "The name to show and download the file as.",
            },
            "title": {"type": "string", "description": "A short caption."},
        },
        "required": ["file_id", "filename", "title"],
        "additionalProperties": False,
    },
    "strict": True,
}


class FilesError(Exception):
    """A Files API request failed."""


@dataclass(frozen=True, slots=True)
class DisplayedFile:
    """A file a graph asked to show, downloaded."""

    file_id: str
    filename: str
    mime: str
    content: bytes
    title: str = ""

    @property
    def is_image(self) -> bool:
        return self.mime.startswith("image/")


def _mime(header: str | None, filename: str) -> str:
    mime = (header or "").split(";")[0].strip().lower()
    if mime and mime != "application/octet-stream":
        return mime
    guessed, _ = mimetypes.guess_type(filename)
    return guessed or "application/octet-stream"


class FilesClient:
    """The Files API through the official SDK."""

    def __init__(self, client: AsyncOpenAI, *, max_download_bytes: int) -> None:
        self._client = client
        self._max = max_download_bytes

    async def close(self) -> None:
        await self._client.close()

    def with_headers(self, headers: dict[str, str]) -> FilesClient:
        """The same Files API, every request sending ``headers`` too (the
        user the UI's gateway key acts for)."""
        return FilesClient(
            self._client.with_options(default_headers=headers),
            max_download_bytes=self._max,
        )

    async def upload(self, path: Path, filename: str, mime: str | None) -> str:
        """Upload a local file; returns its ``file_id``."""
        name = PurePath(filename).name or path.name
        try:
            with path.open("rb") as data:
                created = await self._client.files.create(
                    file=(name, data, mime or _mime(None, name)),
                    purpose=UPLOAD_PURPOSE,
                )
        except (OSError, OpenAIError) as exc:
            raise FilesError(f"uploading {name} failed: {exc}") from exc
        return created.id

    async def download(self, file_id: str) -> tuple[str, str, bytes]:
        """``(filename, mime, bytes)`` of a stored file, up to the size limit."""
        try:
            meta = await self._client.files.retrieve(file_id)
            if meta.bytes > self._max:
                raise FilesError(
                    f"{file_id} has {meta.bytes} bytes; the limit is {self._max}"
                )
            async with self._client.files.with_streaming_response.content(
                file_id
            ) as response:
                chunks: list[bytes] = []
                size = 0
                body = response.iter_bytes()
                try:
                    async for chunk in body:
                        size += len(chunk)
                        if size > self._max:
                            raise FilesError(
                                f"{file_id} is larger than {self._max} bytes"
                            )
                        chunks.append(chunk)
                finally:
                    try:
                        await response.close()
                    finally:
                        await run_out(body)
                header = response.headers.get("content-type")
        except OpenAIError as exc:
            raise FilesError(f"downloading {file_id} failed: {exc}") from exc
        return meta.filename, _mime(header, meta.filename), b"".join(chunks)


def _arguments(call: Item) -> dict[str, object]:
    try:
        arguments = json.loads(call.get("arguments") or "{}")
    except ValueError:
        return {}
    return arguments if isinstance(arguments, dict) else {}


async def display_file(
    call: Item, files: FilesClient | None
) -> tuple[DisplayedFile | None, Item]:
    """Download the file of one ``display_file`` call.

    Returns the file to show (``None`` when it could not be fetched) and the
    matching ``function_call_output``.
    """
    call_id = str(call["call_id"])
    arguments = _arguments(call)
    file_id = arguments.get("file_id")
    if not isinstance(file_id, str) or not file_id:
        return None, _output(call_id, {"displayed": False, "error": "no file_id given"})
    if files is None:
        error = "this client has no Files API configured"
        return None, _output(call_id, {"displayed": False, "error": error})
    try:
        stored_name, mime, content = await files.download(file_id)
    except FilesError as exc:
        return None, _output(call_id, {"displayed": False, "error": str(exc)})
    requested = arguments.get("filename")
    filename = PurePath(requested).name if isinstance(requested, str) else ""
    filename = filename or stored_name or file_id
    title = arguments.get("title")
    shown = DisplayedFile(
        file_id=file_id,
        filename=filename,
        mime=mime,
        content=content,
        title=title if isinstance(title, str) else "",
    )
    how = "inline image" if shown.is_image else "download"
    return shown, _output(
        call_id,
        {"displayed": True, "file_id": file_id, "filename": filename, "as": how},
    )


def _output(call_id: str, status: dict[str, object]) -> Item:
    return function_output(call_id, json.dumps(status, separators=(",", ":")))
