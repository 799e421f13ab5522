"""Filenames and content types from clients, made safe to store and serve."""

from __future__ import annotations

import pytest
from lgos_files_api.sanitize import (
    MAX_FILENAME_BYTES,
    sanitize_content_type,
    sanitize_filename,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("report.pdf", "report.pdf"),
        ("../../etc/passwd", "passwd"),
        ("C:\\fakepath\\photo.jpg", "photo.jpg"),
        ("dir/", "file"),
        ("", "file"),
        (None, "file"),
        (".", "file"),
        ("..", "file"),
        ("  spaced   out  .txt ", "spaced out .txt"),
        ("nul\x00byte.txt", "nulbyte.txt"),
        ("line%0Abreak.txt", "line break.txt"),
        ("say %22hi%22.txt", 'say "hi".txt'),
        ("100%25 real.txt", "100%25 real.txt"),
        ("invoice\u202efdp.exe", "invoicefdp.exe"),
        ("zero\u200bwidth.txt", "zerowidth.txt"),
        ("cafe\u0301.txt", "café.txt"),
        ("日本語.txt", "日本語.txt"),
    ],
)
def test_sanitize_filename(raw: str | None, expected: str) -> None:
    assert sanitize_filename(raw) == expected


def test_long_filenames_keep_their_extension_within_255_bytes() -> None:
    name = sanitize_filename("é" * 300 + ".tar")

    assert name.endswith(".tar")
    assert len(name.encode()) <= MAX_FILENAME_BYTES
    assert name.startswith("é")


def test_long_filename_with_a_long_suffix_is_cut_whole() -> None:
    name = sanitize_filename("a." + "b" * 400)

    assert len(name.encode()) == MAX_FILENAME_BYTES


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("text/plain", "text/plain"),
        ("Text/HTML", "text/html"),
        ("text/plain; charset=UTF-8", "text/plain; charset=utf-8"),
        ('text/csv; charset="latin1"; header=present', "text/csv; charset=latin1"),
        (
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        ),
        (None, "application/octet-stream"),
        ("", "application/octet-stream"),
        ("nonsense", "application/octet-stream"),
        ("text/plain\r\nX-Injected: yes", "application/octet-stream"),
        ("text/html; charset=<script>", "text/html"),
    ],
)
def test_sanitize_content_type(raw: str | None, expected: str) -> None:
    assert sanitize_content_type(raw) == expected
