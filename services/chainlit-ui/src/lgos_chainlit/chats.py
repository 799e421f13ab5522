"""Each chat's state on disk, so a reloaded or resumed chat carries on.

One JSON file per Chainlit thread id under ``LGOS_CHAINLIT_HOME/chats``:
the model, the input ledger, the changed settings and selected tools, a
pending interrupt (the paused Response id and its exact calls), the background
switch and an in-flight background run (its Response id and the last stream
event seen). Files are replaced atomically (temporary file, fsync, rename),
so a crash leaves the previous state, never half of one. The UI saves the
pending interrupt before it asks the question, and a background run's id
before it follows the run.

A file per thread (rather than Chainlit's user session or thread metadata)
works without a Chainlit data layer, is written at the moment the state
changes instead of when the socket disconnects, and is easy to inspect.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lgos_chainlit.interrupts import PendingInterrupt
from lgos_chainlit.ledger import Item

STATE_VERSION = 1
_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


def safe_name(thread_id: str) -> str:
    """A file name for a thread id: itself when harmless, else its hash."""
    if _SAFE_ID.fullmatch(thread_id):
        return thread_id
    return "h-" + hashlib.sha256(thread_id.encode()).hexdigest()


def write_atomically(target: Path, data: bytes) -> None:
    """Replace ``target`` with ``data``: temp file, fsync, rename, dir fsync."""
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    directory = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


@dataclass
class BackgroundRun:
    """A background Response the chat is waiting for.

    Saved as soon as the run is queued, so a reload (or a dropped stream) can
    follow it again from ``sequence``, the last stream event seen (-1: none).
    ``commit_first`` enters the ledger with the output when the run completes;
    ``resuming`` marks the resume of the saved pending interrupt.
    """

    response_id: str
    sequence: int = -1
    commit_first: list[Item] = field(default_factory=list)
    resuming: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "response_id": self.response_id,
            "sequence": self.sequence,
            "commit_first": self.commit_first,
            "resuming": self.resuming,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BackgroundRun:
        return cls(
            response_id=str(data["response_id"]),
            sequence=int(data.get("sequence", -1)),
            commit_first=list(data.get("commit_first", [])),
            resuming=bool(data.get("resuming", False)),
        )


@dataclass(frozen=True)
class ResponseChain:
    """The last Response whose turn is whole in the ledger, on a server that
    keeps Responses: the next request names it (``previous_response_id``)
    and sends only the ledger's items after the first ``covered`` ones."""

    response_id: str
    covered: int

    def to_json(self) -> dict[str, Any]:
        return {"response_id": self.response_id, "covered": self.covered}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ResponseChain:
        return cls(response_id=str(data["response_id"]), covered=int(data["covered"]))


@dataclass
class ChatState:
    """Everything the UI needs to continue one chat."""

    thread_id: str
    model: str
    items: list[Item] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    """Setting values that differ from the graph's defaults."""
    tools: list[str] = field(default_factory=list)
    """Server tools selected for every request."""
    pending: PendingInterrupt | None = None
    background: bool = False
    """The user's "run in background" switch (graphs with ``background``)."""
    running: BackgroundRun | None = None
    chain: ResponseChain | None = None
    """The kept Response the next request continues (deployments that keep
    Responses), and how much of the ledger it covers."""

    def to_json(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "thread_id": self.thread_id,
            "model": self.model,
            "items": self.items,
            "settings": self.settings,
            "tools": self.tools,
            "pending": self.pending.to_json() if self.pending else None,
            "background": self.background,
            "running": self.running.to_json() if self.running else None,
            "chain": self.chain.to_json() if self.chain else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChatState:
        if data.get("version") != STATE_VERSION:
            raise ValueError(f"unsupported chat state version {data.get('version')!r}")
        pending = data.get("pending")
        running = data.get("running")
        return cls(
            thread_id=str(data["thread_id"]),
            model=str(data["model"]),
            items=list(data.get("items", [])),
            settings=dict(data.get("settings", {})),
            tools=[str(name) for name in data.get("tools", [])],
            pending=PendingInterrupt.from_json(pending) if pending else None,
            background=bool(data.get("background", False)),
            running=BackgroundRun.from_json(running) if running else None,
            chain=ResponseChain.from_json(data["chain"]) if data.get("chain") else None,
        )


class ChatStore:
    """Chat states as JSON files in one directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path(self, thread_id: str) -> Path:
        return self.directory / f"{safe_name(thread_id)}.json"

    def load(self, thread_id: str) -> ChatState | None:
        """The saved state of ``thread_id``, or ``None`` if there is none."""
        try:
            text = self.path(thread_id).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        return ChatState.from_json(json.loads(text))

    def save(self, state: ChatState) -> None:
        """Replace the saved state of ``state.thread_id`` atomically."""
        self.directory.mkdir(parents=True, exist_ok=True)
        data = json.dumps(state.to_json(), ensure_ascii=False, indent=1).encode()
        write_atomically(self.path(state.thread_id), data)

    def delete(self, thread_id: str) -> None:
        self.path(thread_id).unlink(missing_ok=True)
