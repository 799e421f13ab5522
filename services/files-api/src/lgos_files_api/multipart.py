"""An incremental ``multipart/form-data`` reader: bytes in, part events out.

It does no IO and keeps no part data: ``feed`` a chunk of the request body,
get back the events it completed. This lets an upload go to S3 while the body
is still arriving, where Starlette's form parser would first spool the whole
file. The byte-level parsing is python-multipart's streaming parser.
"""

from __future__ import annotations

from dataclasses import dataclass

from python_multipart import MultipartParser
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import parse_options_header

from lgos_files_api.errors import MalformedUploadError

# A form of this API has three or four small fields and one file.
MAX_PARTS = 16


@dataclass(frozen=True, slots=True)
class PartStart:
    name: str
    filename: str | None
    content_type: str | None


@dataclass(frozen=True, slots=True)
class PartData:
    data: bytes


@dataclass(frozen=True, slots=True)
class PartEnd:
    pass


Event = PartStart | PartData | PartEnd


def boundary_of(content_type: str | None) -> bytes:
    """The boundary of a ``multipart/form-data`` content type, or an error."""
    media, options = parse_options_header(content_type or "")
    boundary = options.get(b"boundary")
    if media != b"multipart/form-data" or not boundary:
        raise MalformedUploadError(
            "Uploads must be sent as multipart/form-data with a boundary."
        )
    return boundary


class MultipartReader:
    """Turns body chunks into ``PartStart``/``PartData``/``PartEnd`` events."""

    def __init__(self, boundary: bytes) -> None:
        self._events: list[Event] = []
        self._headers: dict[str, str] = {}
        self._field = bytearray()
        self._value = bytearray()
        self._parts = 0
        self.complete = False
        """True once the closing boundary has been read."""
        try:
            self._parser = MultipartParser(
                boundary,
                {
                    "on_part_begin": self._on_part_begin,
                    "on_header_field": self._on_header_field,
                    "on_header_value": self._on_header_value,
                    "on_header_end": self._on_header_end,
                    "on_headers_finished": self._on_headers_finished,
                    "on_part_data": self._on_part_data,
                    "on_part_end": self._on_part_end,
                    "on_end": self._on_end,
                },
            )
        except FormParserError as exc:
            raise MalformedUploadError(f"Malformed multipart body: {exc}") from exc

    def feed(self, chunk: bytes) -> list[Event]:
        """Parse ``chunk``; return the events it completed, in order."""
        try:
            self._parser.write(chunk)
        except FormParserError as exc:
            raise MalformedUploadError(f"Malformed multipart body: {exc}") from exc
        events, self._events = self._events, []
        return events

    def _on_part_begin(self) -> None:
        self._parts += 1
        if self._parts > MAX_PARTS:
            raise MalformedUploadError(f"Too many form fields (at most {MAX_PARTS}).")
        self._headers = {}

    def _on_header_field(self, data: bytes, start: int, end: int) -> None:
        self._field += data[start:end]

    def _on_header_value(self, data: bytes, start: int, end: int) -> None:
        self._value += data[start:end]

    def _on_header_end(self) -> None:
        # Header bytes are kept as latin-1 so any raw UTF-8 survives intact.
        name = self._field.decode("latin-1").strip().lower()
        self._headers[name] = self._value.decode("latin-1").strip()
        self._field.clear()
        self._value.clear()

    def _on_headers_finished(self) -> None:
        disposition, options = parse_options_header(
            self._headers.get("content-disposition")
        )
        name = options.get(b"name")
        if disposition != b"form-data" or name is None:
            raise MalformedUploadError(
                "Each form part needs a Content-Disposition: form-data with a name."
            )
        filename = options.get(b"filename")
        self._events.append(
            PartStart(
                name=_text(name),
                filename=None if filename is None else _text(filename),
                content_type=self._headers.get("content-type"),
            )
        )

    def _on_part_data(self, data: bytes, start: int, end: int) -> None:
        self._events.append(PartData(data[start:end]))

    def _on_part_end(self) -> None:
        self._events.append(PartEnd())

    def _on_end(self) -> None:
        self.complete = True


def _text(raw: bytes) -> str:
    # parse_options_header hands back the header's latin-1 bytes; clients send
    # non-ASCII names as UTF-8 (RFC 7578), so decode them as such.
    return raw.decode("utf-8", errors="replace")
