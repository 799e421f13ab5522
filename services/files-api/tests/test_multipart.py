"""The incremental multipart reader: events from bytes, however they are split."""

from __future__ import annotations

import pytest
from lgos_files_api.errors import MalformedUploadError
from lgos_files_api.multipart import (
    MAX_PARTS,
    MultipartReader,
    PartData,
    PartEnd,
    PartStart,
    boundary_of,
)

BODY = (
    b"--b0\r\n"
    b'Content-Disposition: form-data; name="purpose"\r\n\r\n'
    b"user_data\r\n"
    b"--b0\r\n"
    b'Content-Disposition: form-data; name="file"; '
    b'filename="r\xc3\xa9sum\xc3\xa9.txt"\r\n'
    b"Content-Type: text/plain\r\n\r\n"
    b"line one\r\nline two\r\n- b0 is no boundary\r\n"
    b"--b0--\r\n"
)


def _read(chunks: list[bytes]) -> tuple[list[object], bool]:
    reader = MultipartReader(b"b0")
    events: list[object] = []
    for chunk in chunks:
        events.extend(reader.feed(chunk))
    return events, reader.complete


def _merged(events: list[object]) -> list[object]:
    """Adjacent data events joined, so any chunking compares equal."""
    merged: list[object] = []
    for event in events:
        if isinstance(event, PartData) and merged and isinstance(merged[-1], PartData):
            merged[-1] = PartData(merged[-1].data + event.data)
        else:
            merged.append(event)
    return merged


EXPECTED = [
    PartStart(name="purpose", filename=None, content_type=None),
    PartData(b"user_data"),
    PartEnd(),
    PartStart(name="file", filename="résumé.txt", content_type="text/plain"),
    PartData(b"line one\r\nline two\r\n- b0 is no boundary"),
    PartEnd(),
]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, len(BODY)])
def test_events_do_not_depend_on_how_the_body_is_split(size: int) -> None:
    chunks = [BODY[i : i + size] for i in range(0, len(BODY), size)]

    events, complete = _read(chunks)

    assert _merged(events) == EXPECTED
    assert complete is True


def test_a_body_without_its_closing_boundary_is_incomplete() -> None:
    events, complete = _read([BODY[: BODY.index(b"--b0--")]])

    assert complete is False
    assert PartEnd() not in events[4:]


def test_a_part_without_a_name_is_malformed() -> None:
    reader = MultipartReader(b"b0")

    with pytest.raises(MalformedUploadError):
        reader.feed(b"--b0\r\nContent-Disposition: attachment\r\n\r\nx\r\n--b0--\r\n")


def test_too_many_parts_are_refused() -> None:
    part = b'--b0\r\nContent-Disposition: form-data; name="x"\r\n\r\nv\r\n'
    reader = MultipartReader(b"b0")

    with pytest.raises(MalformedUploadError, match="Too many"):
        reader.feed(part * (MAX_PARTS + 1) + b"--b0--\r\n")


def test_garbage_instead_of_a_boundary_is_malformed() -> None:
    reader = MultipartReader(b"b0")

    with pytest.raises(MalformedUploadError):
        reader.feed(b"this is not multipart at all\r\n" * 4)


@pytest.mark.parametrize(
    "content_type",
    [None, "application/json", "multipart/form-data", "multipart/mixed; boundary=x"],
)
def test_boundary_of_refuses_anything_but_form_data(content_type: str | None) -> None:
    with pytest.raises(MalformedUploadError, match="multipart/form-data"):
        boundary_of(content_type)


def test_boundary_of_reads_quoted_boundaries() -> None:
    assert boundary_of('multipart/form-data; boundary="a b:c"') == b"a b:c"
