"""Receiving one upload: the multipart body streamed into S3, then committed.

Fields are checked as soon as they arrive, so a bad ``purpose`` sent before
the file fails before a byte is stored. The file goes to an ``ObjectWriter``
part by part as the body arrives; the object is finished and its record
committed only once the whole body has been read and every field checked.
Any failure before that, a cut-off body included, discards what was uploaded,
so nothing half-written is ever listed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from lgos_files_api.catalog import FileCatalog
from lgos_files_api.errors import (
    FilesApiError,
    FileTooLargeError,
    InvalidRequestError,
    MalformedUploadError,
    TooManyUploadsError,
)
from lgos_files_api.multipart import (
    MultipartReader,
    PartData,
    PartStart,
    boundary_of,
)
from lgos_files_api.records import (
    MAX_EXPIRES_AFTER_SECONDS,
    PURPOSES,
    SERVICE_PURPOSES,
    FileRecord,
    new_file_id,
)
from lgos_files_api.sanitize import sanitize_content_type, sanitize_filename
from lgos_files_api.slots import UploadSlots
from lgos_files_api.storage import ObjectWriter

# Form field -> the ``param`` an error about it names (OpenAI's dotted form).
_FIELDS = {
    "purpose": "purpose",
    "expires_after[anchor]": "expires_after.anchor",
    "expires_after[seconds]": "expires_after.seconds",
}
_FIELD_LIMIT = 1024
# Room for part headers and the small fields around the file: a declared
# Content-Length beyond ``max_bytes`` plus this cannot be a valid upload.
_FORM_OVERHEAD = 64 * 1024
# After refusing an upload the rest of the body is read and dropped, so a
# client that sends everything before reading gets the answer instead of a
# reset connection; past this many bytes the connection is closed instead.
_DRAIN_LIMIT = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class UploadRequest:
    owner: str
    service: bool
    """A service writes for ``owner``: it may use the service purposes."""
    content_type: str | None
    content_length: int | None


async def receive_upload(
    request: UploadRequest,
    body: AsyncIterator[bytes],
    *,
    catalog: FileCatalog,
    max_bytes: int,
    clock: Callable[[], float],
    slots: UploadSlots,
) -> FileRecord:
    """Stream ``body`` into the store, in one of ``slots`` (refused when its
    owner's or the process's are all taken); return the committed file's
    record."""
    reader = MultipartReader(boundary_of(request.content_type))
    declared = request.content_length
    if declared is not None and declared > max_bytes + _FORM_OVERHEAD:
        await _drain(body)
        raise FileTooLargeError(max_bytes)
    try:
        with slots.hold(request.owner):
            return await _receive(request, reader, body, catalog, max_bytes, clock)
    except TooManyUploadsError:  # refused before a byte was read
        await _drain(body)
        raise


async def _receive(
    request: UploadRequest,
    reader: MultipartReader,
    body: AsyncIterator[bytes],
    catalog: FileCatalog,
    max_bytes: int,
    clock: Callable[[], float],
) -> FileRecord:
    form = _Form(request.owner, catalog, max_bytes, clock, service=request.service)
    try:
        async for chunk in body:
            for event in reader.feed(chunk):
                if isinstance(event, PartStart):
                    form.start(event)
                elif isinstance(event, PartData):
                    await form.data(event.data)
                else:
                    form.end()
        if not reader.complete:
            raise MalformedUploadError(
                "The multipart body ended before its closing boundary."
            )
        record, writer = form.result()
        await writer.finish()
        await catalog.commit(record)
    except FilesApiError:
        await form.discard()
        await _drain(body)
        raise
    except BaseException:
        await form.discard()
        raise
    return record


class _Form:
    """The state of one form while its parts stream past."""

    def __init__(
        self,
        owner: str,
        catalog: FileCatalog,
        max_bytes: int,
        clock: Callable[[], float],
        *,
        service: bool,
    ) -> None:
        self._owner = owner
        self._purposes = PURPOSES | SERVICE_PURPOSES if service else PURPOSES
        self._catalog = catalog
        self._max_bytes = max_bytes
        self._clock = clock
        self._fields: dict[str, str] = {}
        self._writer: ObjectWriter | None = None
        self._file: tuple[str, str, int] | None = None  # id, filename, created_at
        self._in_file = False
        self._field: str | None = None
        self._value = bytearray()

    def start(self, part: PartStart) -> None:
        if part.name == "file":
            if self._writer is not None:
                raise InvalidRequestError(
                    "Only one file can be uploaded per request.", param="file"
                )
            now = self._clock()
            file_id = new_file_id(now)
            content_type = sanitize_content_type(part.content_type)
            self._file = (file_id, sanitize_filename(part.filename), int(now))
            self._writer = self._catalog.blob_writer(self._owner, file_id, content_type)
            self._in_file = True
            return
        param = _FIELDS.get(part.name)
        if param is None:
            raise InvalidRequestError(
                f"Unrecognized request argument supplied: {part.name}",
                param=part.name,
            )
        if part.name in self._fields:
            raise InvalidRequestError(f"'{param}' was sent twice.", param=param)
        self._field = part.name
        self._value.clear()

    async def data(self, data: bytes) -> None:
        if self._in_file and self._writer is not None:
            if self._writer.size + len(data) > self._max_bytes:
                raise FileTooLargeError(self._max_bytes)
            await self._writer.write(data)
        elif self._field is not None:
            self._value += data
            if len(self._value) > _FIELD_LIMIT:
                param = _FIELDS[self._field]
                raise InvalidRequestError(f"'{param}' is too long.", param=param)

    def end(self) -> None:
        if self._in_file:
            self._in_file = False
            return
        if self._field is None:
            return
        name, self._field = self._field, None
        try:
            value = self._value.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise InvalidRequestError(
                f"'{_FIELDS[name]}' must be UTF-8 text.", param=_FIELDS[name]
            ) from None
        self._fields[name] = value
        if name == "purpose":
            _check_purpose(value, self._purposes)

    def result(self) -> tuple[FileRecord, ObjectWriter]:
        """The record to commit once the body is read, with its writer."""
        if self._writer is None or self._file is None:
            raise InvalidRequestError(
                "Missing required parameter: 'file'.", param="file"
            )
        purpose = self._fields.get("purpose")
        if purpose is None:
            raise InvalidRequestError(
                "Missing required parameter: 'purpose'.", param="purpose"
            )
        file_id, filename, created_at = self._file
        record = FileRecord(
            id=file_id,
            owner=self._owner,
            filename=filename,
            purpose=purpose,
            bytes=self._writer.size,
            content_type=self._writer.content_type,
            created_at=created_at,
            expires_at=_expires_at(self._fields, created_at),
        )
        return record, self._writer

    async def discard(self) -> None:
        if self._writer is not None:
            await self._writer.discard()


def _check_purpose(value: str, purposes: frozenset[str]) -> None:
    if value not in purposes:
        allowed = ", ".join(f"'{p}'" for p in sorted(purposes))
        raise InvalidRequestError(
            f"Invalid value for 'purpose': '{value}'. Expected one of {allowed}.",
            param="purpose",
        )


def _expires_at(fields: dict[str, str], created_at: int) -> int | None:
    anchor = fields.get("expires_after[anchor]")
    seconds = fields.get("expires_after[seconds]")
    if anchor is None and seconds is None:
        # As at OpenAI: batch inputs expire after 30 days unless told otherwise.
        if fields.get("purpose") == "batch":
            return created_at + MAX_EXPIRES_AFTER_SECONDS
        return None
    if anchor != "created_at":
        raise InvalidRequestError(
            "'expires_after.anchor' must be 'created_at'.",
            param="expires_after.anchor",
        )
    if seconds is None or not (seconds.isascii() and seconds.isdigit()):
        raise InvalidRequestError(
            "'expires_after.seconds' must be a whole number of seconds.",
            param="expires_after.seconds",
        )
    value = int(seconds)
    if not 1 <= value <= MAX_EXPIRES_AFTER_SECONDS:
        raise InvalidRequestError(
            "'expires_after.seconds' must be between 1 and "
            f"{MAX_EXPIRES_AFTER_SECONDS} (30 days).",
            param="expires_after.seconds",
        )
    return created_at + value


async def _drain(body: AsyncIterator[bytes]) -> None:
    drained = 0
    try:
        async for chunk in body:
            drained += len(chunk)
            if drained > _DRAIN_LIMIT:
                return
    except Exception:
        # The client left while we drained: the error being answered stands.
        return
