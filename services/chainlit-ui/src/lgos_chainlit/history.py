"""Chainlit's chat history (users, threads, steps) as JSON files.

Chainlit re-attaches a chat after a page reload only through a data layer
(and login). ``ThreadFiles`` is the storage behind ``datalayer.FileDataLayer``:
plain dicts in the shapes Chainlit uses (``ThreadDict``, ``StepDict``), one
file per thread plus ``users.json``, each replaced atomically. It knows
nothing of Chainlit, so it is tested alone. Elements (images, downloads) are
not kept: their bytes live in Chainlit's per-session ``.files`` folder.
"""

from __future__ import annotations

import copy
import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lgos_chainlit.chats import safe_name, write_atomically

Record = dict[str, Any]


def now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _parsed(timestamp: str) -> datetime:
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00"))


class ThreadFiles:
    """Users and threads (with their steps) under one directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._threads = directory / "threads"

    # ---------------------------------------------------------------- users

    def _users(self) -> dict[str, Record]:
        try:
            data = json.loads((self.directory / "users.json").read_text("utf-8"))
        except FileNotFoundError:
            return {}
        return dict(data)

    def get_user(self, identifier: str) -> Record | None:
        return self._users().get(identifier)

    def create_user(self, identifier: str, metadata: Record | None = None) -> Record:
        users = self._users()
        user = users.get(identifier) or {
            "id": str(uuid.uuid4()),
            "identifier": identifier,
            "createdAt": now(),
            "metadata": {},
        }
        user["metadata"] = {**user["metadata"], **(metadata or {})}
        users[identifier] = user
        self.directory.mkdir(parents=True, exist_ok=True)
        write_atomically(self.directory / "users.json", json.dumps(users).encode())
        return copy.deepcopy(user)

    def prune_guests(self, created_before: datetime) -> list[str]:
        """Forget guests made before ``created_before``, with their threads;
        the ids of the threads removed.

        A guest is only as old as its browser's session cookie: once that
        expired, the browser is a new guest and nobody can reach the old
        one's chats again.
        """
        users = self._users()
        expired = {
            user["id"]
            for user in users.values()
            if user.get("metadata", {}).get("guest")
            and _parsed(user["createdAt"]) < created_before
        }
        if not expired:
            return []
        removed = []
        for path in self._threads.glob("*.json") if self._threads.exists() else []:
            record = json.loads(path.read_text("utf-8"))
            if record.get("userId") in expired:
                path.unlink(missing_ok=True)
                removed.append(str(record["id"]))
        kept = {key: user for key, user in users.items() if user["id"] not in expired}
        write_atomically(self.directory / "users.json", json.dumps(kept).encode())
        return removed

    def _identifier(self, user_id: str | None) -> str | None:
        for user in self._users().values():
            if user["id"] == user_id:
                return str(user["identifier"])
        return None

    # ---------------------------------------------------------------- threads

    def _path(self, thread_id: str) -> Path:
        return self._threads / f"{safe_name(thread_id)}.json"

    def _load(self, thread_id: str) -> Record | None:
        try:
            return dict(json.loads(self._path(thread_id).read_text("utf-8")))
        except FileNotFoundError:
            return None

    def _save(self, record: Record) -> None:
        self._threads.mkdir(parents=True, exist_ok=True)
        data = json.dumps(record, ensure_ascii=False).encode()
        write_atomically(self._path(record["id"]), data)

    def _new(self, thread_id: str) -> Record:
        return {
            "id": thread_id,
            "createdAt": now(),
            "name": None,
            "userId": None,
            "userIdentifier": None,
            "tags": [],
            "metadata": {},
            "steps": {},
        }

    def update_thread(
        self,
        thread_id: str,
        *,
        name: str | None = None,
        user_id: str | None = None,
        metadata: Record | None = None,
        tags: list[str] | None = None,
    ) -> None:
        record = self._load(thread_id) or self._new(thread_id)
        if name is not None:
            record["name"] = name
        if user_id is not None:
            record["userId"] = user_id
            record["userIdentifier"] = self._identifier(user_id)
        if metadata is not None:
            record["metadata"] = {**record["metadata"], **metadata}
        if tags is not None:
            record["tags"] = list(tags)
        self._save(record)

    def get_thread(self, thread_id: str) -> Record | None:
        """The thread as Chainlit's ``ThreadDict``, steps in creation order."""
        record = self._load(thread_id)
        if record is None:
            return None
        steps = sorted(
            record.pop("steps").values(), key=lambda s: s.get("createdAt") or ""
        )
        return {**record, "steps": steps, "elements": []}

    def thread_author(self, thread_id: str) -> str:
        record = self._load(thread_id)
        return str(record.get("userIdentifier") or "") if record else ""

    def delete_thread(self, thread_id: str) -> None:
        self._path(thread_id).unlink(missing_ok=True)

    def list_threads(
        self,
        *,
        user_id: str | None,
        search: str | None = None,
        first: int = 20,
        cursor: str | None = None,
    ) -> tuple[list[Record], bool]:
        """Threads newest first (without steps), after ``cursor``; and whether
        more follow."""
        records = []
        for path in self._threads.glob("*.json") if self._threads.exists() else []:
            record = json.loads(path.read_text("utf-8"))
            if user_id is not None and record.get("userId") != user_id:
                continue
            if search and search.lower() not in (record.get("name") or "").lower():
                continue
            record["steps"] = []
            record["elements"] = []
            records.append(record)
        records.sort(key=lambda r: (r["createdAt"], r["id"]), reverse=True)
        if cursor is not None:
            ids = [r["id"] for r in records]
            records = records[ids.index(cursor) + 1 :] if cursor in ids else []
        return records[:first], len(records) > first

    # ---------------------------------------------------------------- steps

    def upsert_step(self, step: Record) -> None:
        """Create or update a step (fields given replace stored ones)."""
        thread_id = step.get("threadId")
        if not thread_id or not step.get("id"):
            return
        record = self._load(str(thread_id)) or self._new(str(thread_id))
        stored = record["steps"].get(step["id"], {})
        merged = {**stored, **{k: v for k, v in step.items() if v is not None}}
        merged.setdefault("createdAt", now())
        record["steps"][step["id"]] = merged
        self._save(record)

    def delete_step(self, step_id: str) -> None:
        for path in self._threads.glob("*.json") if self._threads.exists() else []:
            record = json.loads(path.read_text("utf-8"))
            if step_id in record["steps"]:
                del record["steps"][step_id]
                self._save(record)
                return
