"""``PostgresConversationStore``: Conversations in PostgreSQL, on the pool of
the response store (``LGOS_RESPONSE_STORE=postgres``).

Two tables (``background/postgres/schema.py``, created by ``lgos
db-setup``): ``lgos_conversations`` and ``lgos_conversation_items``, whose
rows go with their Conversation (``ON DELETE CASCADE``). Items are ordered
by an identity column, so concurrent appends never interleave within one
batch's order. An item added as a Response's turn carries that Response's
id (``response_id``), so the Response adding its turn again replaces it.
"""

from __future__ import annotations

from typing import Any

from langgraph_openai_serve.background.postgres.store import PostgresResponseStore
from langgraph_openai_serve.conversations.pages import (
    AfterItemNotFound,
    ItemPage,
    Order,
)
from langgraph_openai_serve.conversations.protocol import Conversation


class PostgresConversationStore:
    """A ``ConversationStore`` sharing ``responses``'s connection pool."""

    def __init__(self, responses: PostgresResponseStore) -> None:
        self._responses = responses

    async def create(
        self, scope: str, conversation: Conversation, items: list[dict[str, Any]]
    ) -> None:
        from psycopg.types.json import Jsonb

        async with await self._responses.connection() as conn, conn.transaction():
            await conn.execute(
                "INSERT INTO lgos_conversations (id, scope, metadata, created_at) "
                "VALUES (%s, %s, %s, %s)",
                (
                    conversation.id,
                    scope,
                    Jsonb(conversation.metadata),
                    conversation.created_at,
                ),
            )
            await conn.execute(_APPEND_TURN, (conversation.id, None, Jsonb(items)))

    async def get(self, conversation_id: str, scope: str) -> Conversation | None:
        row = await self._one(
            "SELECT id, created_at, metadata FROM lgos_conversations "
            "WHERE id = %s AND scope = %s",
            (conversation_id, scope),
        )
        return _conversation(row) if row else None

    async def update(
        self, conversation_id: str, scope: str, metadata: dict[str, str]
    ) -> Conversation | None:
        from psycopg.types.json import Jsonb

        row = await self._one(
            "UPDATE lgos_conversations SET metadata = %s "
            "WHERE id = %s AND scope = %s RETURNING id, created_at, metadata",
            (Jsonb(metadata), conversation_id, scope),
        )
        return _conversation(row) if row else None

    async def delete(self, conversation_id: str, scope: str) -> bool:
        row = await self._one(
            "DELETE FROM lgos_conversations WHERE id = %s AND scope = %s RETURNING id",
            (conversation_id, scope),
        )
        return row is not None

    async def items(
        self, conversation_id: str, scope: str
    ) -> list[dict[str, Any]] | None:
        async with await self._responses.connection() as conn:
            cursor = await conn.execute(
                "SELECT i.item FROM lgos_conversations c "
                "LEFT JOIN lgos_conversation_items i ON i.conversation_id = c.id "
                "WHERE c.id = %s AND c.scope = %s ORDER BY i.seq",
                (conversation_id, scope),
            )
            rows = await cursor.fetchall()
        if not rows:
            return None
        return [row["item"] for row in rows if row["item"] is not None]

    async def page(
        self,
        conversation_id: str,
        scope: str,
        *,
        limit: int,
        order: Order,
        after: str | None,
    ) -> ItemPage | None:
        async with await self._responses.connection() as conn:
            cursor = await conn.execute(
                "SELECT (SELECT seq FROM lgos_conversation_items "
                " WHERE conversation_id = c.id AND item_id = %s) AS after_seq "
                "FROM lgos_conversations c WHERE c.id = %s AND c.scope = %s",
                (after, conversation_id, scope),
            )
            found = await cursor.fetchone()
            if found is None:
                return None
            if after is not None and found["after_seq"] is None:
                raise AfterItemNotFound(after)
            # One more than the page, to tell whether more follow.
            cursor = await conn.execute(
                _PAGE[order], (conversation_id, found["after_seq"], limit + 1)
            )
            rows = await cursor.fetchall()
        items = [row["item"] for row in rows]
        return ItemPage(items[:limit], len(items) > limit)

    async def add_items(
        self,
        conversation_id: str,
        scope: str,
        items: list[dict[str, Any]],
        *,
        response_id: str | None = None,
    ) -> bool:
        from psycopg.types.json import Jsonb

        async with await self._responses.connection() as conn, conn.transaction():
            # The lock keeps a concurrent delete from removing the
            # Conversation between the check and the insert.
            cursor = await conn.execute(
                "SELECT id FROM lgos_conversations WHERE id = %s AND scope = %s "
                "FOR KEY SHARE",
                (conversation_id, scope),
            )
            if await cursor.fetchone() is None:
                return False
            if response_id is not None:
                await conn.execute(
                    "DELETE FROM lgos_conversation_items "
                    "WHERE conversation_id = %s AND response_id = %s",
                    (conversation_id, response_id),
                )
            await conn.execute(
                _APPEND_TURN, (conversation_id, response_id, Jsonb(items))
            )
        return True

    async def item(
        self, conversation_id: str, item_id: str, scope: str
    ) -> dict[str, Any] | None:
        row = await self._one(
            "SELECT i.item FROM lgos_conversation_items i "
            "JOIN lgos_conversations c ON c.id = i.conversation_id "
            "WHERE i.conversation_id = %s AND i.item_id = %s AND c.scope = %s",
            (conversation_id, item_id, scope),
        )
        return row["item"] if row else None

    async def delete_item(self, conversation_id: str, item_id: str, scope: str) -> bool:
        row = await self._one(
            "DELETE FROM lgos_conversation_items i USING lgos_conversations c "
            "WHERE c.id = i.conversation_id AND i.conversation_id = %s "
            "AND i.item_id = %s AND c.scope = %s RETURNING i.item_id",
            (conversation_id, item_id, scope),
        )
        return row is not None

    async def _one(self, query: str, params: tuple[Any, ...]) -> Any:
        async with await self._responses.connection() as conn:
            cursor = await conn.execute(query, params)
            return await cursor.fetchone()


# Appends a JSON array of items in its order, skipping ids already held,
# tagged with the Response whose turn they are (or null).
_APPEND_TURN = """
INSERT INTO lgos_conversation_items (conversation_id, response_id, item_id, item)
SELECT %s, %s, element->>'id', element
FROM jsonb_array_elements(%s) WITH ORDINALITY AS batch(element, n)
ORDER BY n
ON CONFLICT DO NOTHING
"""


# A page of items after the cursor's identity value (none: from the start).
_PAGE: dict[Order, str] = {
    "asc": (
        "SELECT item FROM lgos_conversation_items WHERE conversation_id = %s "
        "AND seq > coalesce(%s::bigint, -1) ORDER BY seq LIMIT %s"
    ),
    "desc": (
        "SELECT item FROM lgos_conversation_items WHERE conversation_id = %s "
        "AND seq < coalesce(%s::bigint, 9223372036854775807) "
        "ORDER BY seq DESC LIMIT %s"
    ),
}


def _conversation(row: Any) -> Conversation:
    return Conversation(row["id"], int(row["created_at"]), dict(row["metadata"]))
