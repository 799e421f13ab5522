"""``PostgresConversationStore``: Conversations in PostgreSQL, on the
backend's pool (``LGOS_RESPONSE_STORE=postgres``).

Two tables (``schema.py``, created by ``lgos db-setup``):
``lgos_conversations`` and ``lgos_conversation_items``, whose rows go with
their Conversation (``ON DELETE CASCADE``). Items are ordered
by an identity column, so concurrent appends never interleave within one
batch's order. An item added as a Response's turn carries that Response's
id (``response_id``), so the Response adding its turn again replaces it.

A turn's claim is two columns of its Conversation's row: ``turn_holder``
and ``turn_expires_at`` (the database's clock, so processes on other hosts
agree; ``NULL`` once the holder ended it). The claim is one conditional
``UPDATE``; the items are read by a second statement sent in the same
pipeline, so one round trip claims and reads, and the read sees every turn
that ended before the claim (a statement's snapshot could predate a turn
the ``UPDATE`` waited for). A holder naming a Response of
``lgos_background_responses`` that is not finished holds on whatever the
expiry says: a queued background run keeps its Conversation while it waits,
and across the workers that run it.
"""

from __future__ import annotations

from typing import Any

from langgraph_openai_serve.backends.postgres.database import Database, read_only
from langgraph_openai_serve.conversations.errors import ConversationLockedError
from langgraph_openai_serve.conversations.pages import (
    AfterItemNotFound,
    ItemPage,
    Order,
)
from langgraph_openai_serve.conversations.protocol import Conversation
from langgraph_openai_serve.responses.protocol import TERMINAL_STATUSES


class PostgresConversationStore:
    """A ``ConversationStore`` on the backend's ``Database``."""

    def __init__(self, database: Database) -> None:
        self._database = database
        self._connection = database.connection

    async def create(
        self, scope: str, conversation: Conversation, items: list[dict[str, Any]]
    ) -> None:
        from psycopg.types.json import Jsonb

        async with await self._connection() as conn, conn.transaction():
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

    @read_only
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

    @read_only
    async def items(
        self, conversation_id: str, scope: str
    ) -> list[dict[str, Any]] | None:
        async with await self._connection() as conn:
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

    @read_only
    async def page(
        self,
        conversation_id: str,
        scope: str,
        *,
        limit: int,
        order: Order,
        after: str | None,
    ) -> ItemPage | None:
        async with await self._connection() as conn:
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
        holder: str | None = None,
    ) -> bool:
        from psycopg.types.json import Jsonb

        async with await self._connection() as conn, conn.transaction():
            # The row lock keeps a concurrent delete from removing the
            # Conversation between the check and the insert, and orders the
            # append against a turn's claim: whichever commits first, the
            # other sees it.
            cursor = await conn.execute(
                _END_TURN if holder is not None else _CHECK_FREE,
                {"id": conversation_id, "scope": scope, "holder": holder},
            )
            row = await cursor.fetchone()
            if row is None:
                return False
            if response_id is None and row["held"]:
                raise ConversationLockedError(conversation_id)
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

    async def begin_turn(
        self,
        conversation_id: str,
        scope: str,
        holder: str,
        *,
        lease: float,
        history: bool = True,
    ) -> list[dict[str, Any]] | None:
        params = {"id": conversation_id, "scope": scope, "holder": holder}
        async with await self._connection() as conn, conn.pipeline():
            claim = await conn.execute(_CLAIM, {**params, "lease": lease})
            read = await conn.execute(_HISTORY, params) if history else None
            found = await claim.fetchone()
            rows = await read.fetchall() if read is not None else []
        if not found["known"]:
            return None
        if not found["claimed"]:
            raise ConversationLockedError(conversation_id)
        return [row["item"] for row in rows]

    async def renew_turn(
        self, conversation_id: str, holder: str, *, lease: float
    ) -> bool:
        row = await self._one(
            "UPDATE lgos_conversations "
            "SET turn_expires_at = clock_timestamp() + make_interval(secs => %s) "
            "WHERE id = %s AND turn_holder = %s AND turn_expires_at IS NOT NULL "
            "RETURNING id",
            (lease, conversation_id, holder),
        )
        return row is not None

    async def end_turn(self, conversation_id: str, holder: str) -> None:
        await self._one(
            "UPDATE lgos_conversations SET turn_expires_at = NULL "
            "WHERE id = %s AND turn_holder = %s RETURNING id",
            (conversation_id, holder),
        )

    @read_only
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
        async with await self._connection() as conn:
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


_TERMINAL = ", ".join(f"'{status}'" for status in sorted(TERMINAL_STATUSES))

# Whether the Conversation row ``c`` is held by a turn: its claim has not
# lapsed, or its holder is a kept Response that has not finished. The
# holder is read by its id as a scalar subquery: an EXISTS here may be
# planned as a hash of every unfinished Response (a scan of the table),
# which the planner prefers while the table is small.
_HELD = f"""(c.turn_holder IS NOT NULL AND (
    coalesce(c.turn_expires_at > clock_timestamp(), false)
    OR coalesce((
        SELECT NOT (r.snapshot->>'status' = ANY (ARRAY[{_TERMINAL}]))
        FROM lgos_background_responses r WHERE r.id = c.turn_holder
    ), false)
))"""

# Claims the Conversation unless a turn holds it; says whether it is known.
_CLAIM = f"""
WITH claimed AS (
    UPDATE lgos_conversations c
    SET turn_holder = %(holder)s,
        turn_expires_at = clock_timestamp() + make_interval(secs => %(lease)s)
    WHERE c.id = %(id)s AND c.scope = %(scope)s AND NOT {_HELD}
    RETURNING c.id
)
SELECT EXISTS (SELECT 1 FROM claimed) AS claimed,
    EXISTS (
        SELECT 1 FROM lgos_conversations WHERE id = %(id)s AND scope = %(scope)s
    ) AS known
"""

# The items, oldest first, if the claim above was this holder's.
_HISTORY = """
SELECT i.item FROM lgos_conversation_items i
JOIN lgos_conversations c ON c.id = i.conversation_id
WHERE c.id = %(id)s AND c.scope = %(scope)s AND c.turn_holder = %(holder)s
ORDER BY i.seq
"""

# Locks the row against a claim (SHARE conflicts with the claim's UPDATE)
# and says whether a turn holds it.
_CHECK_FREE = f"""
SELECT {_HELD} AS held FROM lgos_conversations c
WHERE c.id = %(id)s AND c.scope = %(scope)s FOR SHARE
"""

# A turn's items go in: its holder's claim ends in the same transaction (a
# turn is never refused: it ran).
_END_TURN = """
UPDATE lgos_conversations c SET turn_expires_at = CASE
    WHEN c.turn_holder = %(holder)s THEN NULL ELSE c.turn_expires_at END
WHERE c.id = %(id)s AND c.scope = %(scope)s
RETURNING false AS held
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
