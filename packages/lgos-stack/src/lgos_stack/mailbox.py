"""How a control command asks the running supervisor to do something.

``lgos-demo-stack restart NAME`` and ``sync-models`` drop a request file into
``{state_dir}/mailbox/`` and send the supervisor SIGUSR1; the supervisor
takes every waiting request, carries it out and writes the outcome beside
it, which the command waits for. Files rather than a socket: the supervisor
stays a single thread, and a request outlives a signal that arrives while it
is busy.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lgos_stack.state import write_state

Action = Literal["restart", "sync-models"]
_REQUEST = ".request.json"
_ANSWER = ".answer.json"


@dataclass(frozen=True)
class Request:
    id: str
    action: Action
    service: str | None = None


@dataclass(frozen=True)
class Answer:
    ok: bool
    message: str


def mailbox(state_dir: Path) -> Path:
    return state_dir / "mailbox"


def post(state_dir: Path, action: Action, service: str | None = None) -> Request:
    """Leave a request for the supervisor (the caller then signals it)."""
    request = Request(id=uuid.uuid4().hex, action=action, service=service)
    folder = mailbox(state_dir)
    folder.mkdir(parents=True, exist_ok=True)
    write_state(
        folder / f"{request.id}{_REQUEST}",
        {"action": request.action, "service": request.service},
    )
    return request


def take(state_dir: Path) -> list[Request]:
    """Every waiting request, oldest first, removed from the mailbox."""
    folder = mailbox(state_dir)
    found = sorted(folder.glob(f"*{_REQUEST}"), key=lambda p: p.stat().st_mtime)
    requests = []
    for path in found:
        data = json.loads(path.read_text())
        path.unlink()
        requests.append(
            Request(
                id=path.name.removesuffix(_REQUEST),
                action=data["action"],
                service=data.get("service"),
            )
        )
    return requests


def reply(state_dir: Path, request: Request, answer: Answer) -> None:
    write_state(
        mailbox(state_dir) / f"{request.id}{_ANSWER}",
        {"ok": answer.ok, "message": answer.message},
    )


def collect(state_dir: Path, request: Request) -> Answer | None:
    """The supervisor's answer to ``request`` once written (then removed)."""
    path = mailbox(state_dir) / f"{request.id}{_ANSWER}"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    path.unlink()
    return Answer(ok=data["ok"], message=data["message"])
