"""Client-supplied names and types, made safe to store and to send back.

The filename is shown by UIs and echoed in ``Content-Disposition``; the content
type is served back verbatim. Neither may carry paths, control characters or
header syntax.
"""

from __future__ import annotations

import re
import unicodedata

DEFAULT_FILENAME = "file"
DEFAULT_CONTENT_TYPE = "application/octet-stream"
# Most filesystems and S3 metadata cap a name at 255 bytes.
MAX_FILENAME_BYTES = 255

_FORM_ESCAPE = re.compile("%([01][0-9A-F]|22)", re.IGNORECASE)
_TOKEN = r"[A-Za-z0-9!#$&^_.+-]+"
_MEDIA_TYPE = re.compile(rf"({_TOKEN})/({_TOKEN})")
_CHARSET = re.compile(r"charset\s*=\s*\"?([A-Za-z0-9._:-]{1,40})\"?", re.IGNORECASE)
# Control (Cc) and format (Cf: bidi overrides, zero-width) characters, and
# unassigned/private code points (Cn, Co), which can disguise a name.
_DROPPED_CATEGORIES = frozenset({"Cc", "Cf", "Cn", "Co", "Cs"})


def sanitize_filename(raw: str | None) -> str:
    """A display-safe base name: no directories, controls or odd spaces."""
    if not raw:
        return DEFAULT_FILENAME
    # Browsers escape '"' and line breaks in multipart names as %22, %0A, %0D
    # (httpx every control character): undo that, then filter what it gives.
    name = _FORM_ESCAPE.sub(lambda match: chr(int(match[1], 16)), raw)
    name = unicodedata.normalize("NFC", name)
    # Browsers and some clients send a whole path; keep its last segment.
    name = re.split(r"[/\\]", name)[-1]
    name = "".join(
        " " if char.isspace() else char
        for char in name
        if unicodedata.category(char) not in _DROPPED_CATEGORIES or char.isspace()
    )
    name = " ".join(name.split())
    if name in {"", ".", ".."}:
        return DEFAULT_FILENAME
    return _truncate(name)


def sanitize_content_type(raw: str | None) -> str:
    """``type/subtype`` (plus a ``charset``), or ``application/octet-stream``."""
    if not raw:
        return DEFAULT_CONTENT_TYPE
    media, _, params = raw.partition(";")
    match = _MEDIA_TYPE.fullmatch(media.strip())
    if match is None:
        return DEFAULT_CONTENT_TYPE
    result = f"{match[1]}/{match[2]}".lower()
    charset = _CHARSET.search(params)
    if charset:
        result += f"; charset={charset[1].lower()}"
    return result


def _truncate(name: str) -> str:
    if len(name.encode()) <= MAX_FILENAME_BYTES:
        return name
    stem, dot, suffix = name.rpartition(".")
    # Keep a short extension: it is what tells a UI what the file is.
    if not dot or not stem or len(suffix.encode()) > 16:
        stem, suffix = name, ""
    budget = MAX_FILENAME_BYTES - len(suffix.encode()) - (1 if suffix else 0)
    cut = stem.encode()[:budget].decode(errors="ignore").rstrip()
    return f"{cut}.{suffix}" if suffix else cut
