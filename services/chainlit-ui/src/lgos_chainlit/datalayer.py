"""A Chainlit data layer on ``history.ThreadFiles``.

Switched on with guests (``LGOS_CHAINLIT_HISTORY``, the default) or password
login (``LGOS_CHAINLIT_USERS``), in ``app.py``: Chainlit keeps history and
resumes threads (``on_chat_resume``) only for signed-in users, and that resume
is what lets a reloaded page continue a chat, including a pending interrupt.
"""

# Chainlit leaves its decorators and many methods unannotated.
# mypy: allow-untyped-calls, allow-untyped-decorators

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from chainlit.data.base import BaseDataLayer
from chainlit.data.utils import queue_until_user_message
from chainlit.element import Element, ElementDict
from chainlit.step import StepDict
from chainlit.types import (
    Feedback,
    PageInfo,
    PaginatedResponse,
    Pagination,
    ThreadDict,
    ThreadFilter,
)
from chainlit.user import PersistedUser, User

from lgos_chainlit.chats import ChatStore
from lgos_chainlit.history import Record, ThreadFiles


def _persisted(record: Record) -> PersistedUser:
    return PersistedUser(
        id=record["id"],
        identifier=record["identifier"],
        createdAt=record["createdAt"],
        metadata=record.get("metadata", {}),
    )


class FileDataLayer(BaseDataLayer):
    """Threads and steps in JSON files; no feedback, elements or favorites.

    A deleted thread takes its chat ledger in ``chats`` with it. Each new
    guest first forgets the guests older than ``guest_lifetime`` (Chainlit's
    session lifetime: no browser can be them again), their threads and their
    ledgers.
    """

    def __init__(
        self,
        directory: Path,
        chats: ChatStore | None = None,
        guest_lifetime: timedelta | None = None,
    ) -> None:
        self.files = ThreadFiles(directory)
        self.chats = chats
        self.guest_lifetime = guest_lifetime

    async def get_user(self, identifier: str) -> PersistedUser | None:
        record = self.files.get_user(identifier)
        return _persisted(record) if record else None

    async def create_user(self, user: User) -> PersistedUser | None:
        if user.metadata.get("guest") and self.guest_lifetime is not None:
            cutoff = datetime.now(UTC) - self.guest_lifetime
            for thread_id in self.files.prune_guests(cutoff):
                self._forget_chat(thread_id)
        return _persisted(self.files.create_user(user.identifier, user.metadata))

    async def delete_feedback(self, feedback_id: str) -> bool:
        return False

    async def upsert_feedback(self, feedback: Feedback) -> str:
        return feedback.id or ""

    @queue_until_user_message()
    async def create_element(self, element: Element) -> None:
        return None

    async def get_element(self, thread_id: str, element_id: str) -> ElementDict | None:
        return None

    @queue_until_user_message()
    async def delete_element(
        self, element_id: str, thread_id: str | None = None
    ) -> None:
        return None

    @queue_until_user_message()
    async def create_step(self, step_dict: StepDict) -> None:
        self.files.upsert_step(dict(step_dict))

    @queue_until_user_message()
    async def update_step(self, step_dict: StepDict) -> None:
        self.files.upsert_step(dict(step_dict))

    @queue_until_user_message()
    async def delete_step(self, step_id: str) -> None:
        self.files.delete_step(step_id)

    async def get_thread_author(self, thread_id: str) -> str:
        return self.files.thread_author(thread_id)

    async def delete_thread(self, thread_id: str) -> None:
        self.files.delete_thread(thread_id)
        self._forget_chat(thread_id)

    def _forget_chat(self, thread_id: str) -> None:
        if self.chats is not None:
            self.chats.delete(thread_id)

    async def list_threads(
        self, pagination: Pagination, filters: ThreadFilter
    ) -> PaginatedResponse[ThreadDict]:
        threads, more = self.files.list_threads(
            user_id=filters.userId,
            search=filters.search,
            first=pagination.first,
            cursor=pagination.cursor,
        )
        info = PageInfo(
            hasNextPage=more,
            startCursor=threads[0]["id"] if threads else None,
            endCursor=threads[-1]["id"] if threads else None,
        )
        return PaginatedResponse(pageInfo=info, data=[_thread(t) for t in threads])

    async def get_thread(self, thread_id: str) -> ThreadDict | None:
        record = self.files.get_thread(thread_id)
        return _thread(record) if record else None

    def steps_now(self, thread_id: str) -> list[StepDict] | None:
        """The thread's steps as saved at this moment (read without an
        await, so nothing can be saved meanwhile)."""
        record = self.files.get_thread(thread_id)
        return _thread(record)["steps"] if record else None

    async def update_thread(
        self,
        thread_id: str,
        name: str | None = None,
        user_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        tags: list[str] | None = None,
    ) -> None:
        self.files.update_thread(
            thread_id, name=name, user_id=user_id, metadata=metadata, tags=tags
        )

    async def build_debug_url(self) -> str:
        return ""

    async def close(self) -> None:
        return None

    async def get_favorite_steps(self, user_id: str) -> list[StepDict]:
        return []


def _thread(record: Record) -> ThreadDict:
    return ThreadDict(
        id=record["id"],
        createdAt=record["createdAt"],
        name=record.get("name"),
        userId=record.get("userId"),
        userIdentifier=record.get("userIdentifier"),
        tags=record.get("tags"),
        metadata=record.get("metadata"),
        steps=[StepDict(**step) for step in record.get("steps", [])],  # type: ignore[typeddict-item]
        elements=[],
    )
