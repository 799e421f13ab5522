"""What a stored file is: its record, its id, and the purposes it may have."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

# The purposes OpenAI's Files API accepts; LGOS clients use user_data and assistants.
PURPOSES = frozenset(
    {"assistants", "batch", "fine-tune", "vision", "user_data", "evals"}
)
# Purposes only a service writes (a Batch's results), as at OpenAI, where no
# client uploads them; owners list, read and delete them like any other file.
SERVICE_PURPOSES = frozenset({"batch_output"})

# OpenAI bounds expires_after to 30 days; the lower bound stays at one second
# (OpenAI asks for an hour) so short-lived scratch files are possible.
MAX_EXPIRES_AFTER_SECONDS = 30 * 24 * 3600

# ``file-`` + 12 hex digits of milliseconds since the epoch + 12 random hex
# digits. The time prefix makes ids sort by creation, so an S3 key listing is
# already in creation order and ``after`` cursors are plain key comparisons.
_FILE_ID = re.compile(r"file-[0-9a-f]{24}")


def new_file_id(now: float) -> str:
    millis = int(now * 1000)
    return f"file-{millis:012x}{secrets.token_hex(6)}"


def is_file_id(value: str) -> bool:
    """True for ids this service mints; anything else can never exist."""
    return _FILE_ID.fullmatch(value) is not None


@dataclass(frozen=True, slots=True)
class FileRecord:
    """One stored file, as its metadata object holds it."""

    id: str
    owner: str
    filename: str
    purpose: str
    bytes: int
    content_type: str
    created_at: int
    expires_at: int | None = None

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and self.expires_at <= now
