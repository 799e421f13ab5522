"""One conformance suite for every ``ConversationStore``: memory and
PostgreSQL. Each test runs against both backends (the ``backend`` fixture of
``backend_fixtures.py``), so they order, deduplicate, scope and delete items
the same way."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import psycopg
import pytest
from langgraph_openai_serve.backends.postgres import PostgresBackend
from langgraph_openai_serve.conversations.pages import AfterItemNotFound
from langgraph_openai_serve.conversations.protocol import Conversation
from psycopg.rows import dict_row

pytestmark = pytest.mark.anyio

# The tables as the first Conversations release created them, before items
# recorded the Response that added them: the migration must keep their rows.
_FIRST_SCHEMA = """
CREATE TABLE lgos_conversations (
    id text PRIMARY KEY,
    scope text NOT NULL,
    metadata jsonb NOT NULL,
    created_at bigint NOT NULL
);
CREATE TABLE lgos_conversation_items (
    conversation_id text NOT NULL
        REFERENCES lgos_conversations (id) ON DELETE CASCADE,
    item_id text NOT NULL,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    item jsonb NOT NULL,
    PRIMARY KEY (conversation_id, item_id)
);
INSERT INTO lgos_conversations VALUES ('conv_old', 'alice', '{}', 0);
INSERT INTO lgos_conversation_items (conversation_id, item_id, item) VALUES
    ('conv_old', 'msg_old', '{"id": "msg_old", "type": "message", "role": "user",
      "status": "completed", "content": [{"type": "input_text", "text": "old"}]}');
"""


@pytest.fixture
def store(backend):
    return backend.conversations


def _conversation(**metadata: str) -> Conversation:
    return Conversation(f"conv_{uuid.uuid4().hex}", int(time.time()), metadata)


def _item(text: str, item_id: str | None = None) -> dict[str, Any]:
    return {
        "id": item_id or f"msg_{uuid.uuid4().hex}",
        "type": "message",
        "role": "user",
        "status": "completed",
        "content": [{"type": "input_text", "text": text}],
    }


def _texts(items: list[dict[str, Any]] | None) -> list[str]:
    assert items is not None
    return [item["content"][0]["text"] for item in items]


async def test_a_conversation_and_its_items_come_back_in_order(store):
    conversation = _conversation(topic="tea")
    await store.create("alice", conversation, [_item("one"), _item("two")])
    await store.add_items(conversation.id, "alice", [_item("three"), _item("four")])

    assert await store.get(conversation.id, "alice") == conversation
    assert _texts(await store.items(conversation.id, "alice")) == [
        "one",
        "two",
        "three",
        "four",
    ]


async def test_an_empty_conversation_has_an_empty_list_not_none(store):
    conversation = _conversation()
    await store.create("alice", conversation, [])

    assert await store.items(conversation.id, "alice") == []
    assert await store.items("conv_unknown", "alice") is None


async def test_an_item_id_already_held_is_not_added_again(store):
    conversation = _conversation()
    await store.create("alice", conversation, [_item("first", "msg_a")])
    await store.add_items(
        conversation.id, "alice", [_item("again", "msg_a"), _item("new", "msg_b")]
    )

    assert _texts(await store.items(conversation.id, "alice")) == ["first", "new"]


async def test_another_scope_finds_changes_and_deletes_nothing(store):
    conversation = _conversation(owner="alice")
    await store.create("alice", conversation, [_item("secret", "msg_s")])

    assert await store.get(conversation.id, "bob") is None
    assert await store.items(conversation.id, "bob") is None
    assert await store.item(conversation.id, "msg_s", "bob") is None
    assert await store.update(conversation.id, "bob", {"owner": "bob"}) is None
    assert await store.add_items(conversation.id, "bob", [_item("x")]) is False
    assert await store.delete_item(conversation.id, "msg_s", "bob") is False
    assert await store.delete(conversation.id, "bob") is False
    assert await store.get(conversation.id, "alice") == conversation
    assert _texts(await store.items(conversation.id, "alice")) == ["secret"]


async def test_update_replaces_the_metadata(store):
    conversation = _conversation(a="1", b="2")
    await store.create("alice", conversation, [])

    updated = await store.update(conversation.id, "alice", {"c": "3"})

    assert updated == Conversation(conversation.id, conversation.created_at, {"c": "3"})
    assert await store.get(conversation.id, "alice") == updated


async def test_items_are_retrieved_and_deleted_one_by_one(store):
    conversation = _conversation()
    await store.create("alice", conversation, [_item("keep"), _item("drop", "msg_d")])

    assert _texts([await store.item(conversation.id, "msg_d", "alice")]) == ["drop"]
    assert await store.delete_item(conversation.id, "msg_d", "alice") is True
    assert await store.delete_item(conversation.id, "msg_d", "alice") is False
    assert await store.item(conversation.id, "msg_d", "alice") is None
    assert _texts(await store.items(conversation.id, "alice")) == ["keep"]


async def test_deleting_a_conversation_deletes_its_items(
    store, on_postgres, postgres_uri
):
    conversation = _conversation()
    await store.create("alice", conversation, [_item("gone", "msg_g")])

    assert await store.delete(conversation.id, "alice") is True
    assert await store.get(conversation.id, "alice") is None
    assert await store.add_items(conversation.id, "alice", [_item("late")]) is False
    if on_postgres:
        async with await psycopg.AsyncConnection.connect(
            postgres_uri, autocommit=True, row_factory=dict_row
        ) as conn:
            cursor = await conn.execute(
                "SELECT count(*) AS n FROM lgos_conversation_items "
                "WHERE conversation_id = %s",
                (conversation.id,),
            )
            assert (await cursor.fetchone())["n"] == 0


async def test_concurrent_batches_keep_each_batch_in_order(store):
    conversation = _conversation()
    await store.create("alice", conversation, [])
    batches = [[_item(f"{b}-{n}") for n in range(5)] for b in range(6)]

    await asyncio.gather(
        *(store.add_items(conversation.id, "alice", batch) for batch in batches)
    )

    texts = _texts(await store.items(conversation.id, "alice"))
    assert len(texts) == 30
    for b in range(6):
        assert [t for t in texts if t.startswith(f"{b}-")] == [
            f"{b}-{n}" for n in range(5)
        ]


async def test_a_response_adding_its_turn_again_replaces_its_first_turn(store):
    # A background run re-run after its worker was lost between adding its
    # turn and storing its end adds the turn again, with new output ids.
    conversation = _conversation()
    await store.create("alice", conversation, [_item("before")])
    question = _item("question", "msg_q")
    await store.add_items(
        conversation.id, "alice", [question, _item("lost answer")], response_id="r1"
    )
    await store.add_items(conversation.id, "alice", [_item("other")], response_id="r2")

    await store.add_items(
        conversation.id, "alice", [question, _item("final answer")], response_id="r1"
    )

    assert _texts(await store.items(conversation.id, "alice")) == [
        "before",
        "other",
        "question",
        "final answer",
    ]


async def test_a_turn_never_removes_items_another_call_added(store):
    conversation = _conversation()
    await store.create("alice", conversation, [_item("held", "msg_h")])
    await store.add_items(conversation.id, "alice", [_item("typed", "msg_t")])

    # The turn names an item the Conversation held already: it stays put.
    turn = [_item("held", "msg_h"), _item("answer")]
    await store.add_items(conversation.id, "alice", turn, response_id="r1")
    await store.add_items(conversation.id, "alice", turn, response_id="r1")

    assert _texts(await store.items(conversation.id, "alice")) == [
        "held",
        "typed",
        "answer",
    ]


async def test_setup_migrates_the_first_conversation_tables_in_place(
    empty_database,
):
    with psycopg.connect(empty_database, autocommit=True) as conn:
        conn.execute(_FIRST_SCHEMA)
    backend = PostgresBackend(empty_database)
    try:
        await backend.setup()
        store = backend.conversations
        turn = [_item("new"), _item("answer")]
        await store.add_items("conv_old", "alice", turn, response_id="r1")
        await store.add_items("conv_old", "alice", turn[:1], response_id="r1")

        assert _texts(await store.items("conv_old", "alice")) == ["old", "new"]
    finally:
        await backend.close()


async def _ten(store) -> str:
    conversation = _conversation()
    items = [_item(str(n), f"msg_{n}") for n in range(10)]
    await store.create("alice", conversation, items[:4])
    await store.add_items(conversation.id, "alice", items[4:])
    await store.delete_item(conversation.id, "msg_5", "alice")
    return conversation.id


async def test_pages_walk_the_items_both_ways_with_the_after_cursor(store):
    conversation_id = await _ten(store)

    pages: dict[str, list[list[str]]] = {"asc": [], "desc": []}
    for order in ("asc", "desc"):
        after = None
        while True:
            page = await store.page(
                conversation_id, "alice", limit=4, order=order, after=after
            )
            pages[order].append(_texts(page.items))
            if not page.has_more:
                break
            after = page.items[-1]["id"]

    assert pages["asc"] == [["0", "1", "2", "3"], ["4", "6", "7", "8"], ["9"]]
    assert pages["desc"] == [["9", "8", "7", "6"], ["4", "3", "2", "1"], ["0"]]


async def test_a_page_that_ends_the_list_exactly_has_no_more(store):
    conversation_id = await _ten(store)

    page = await store.page(conversation_id, "alice", limit=9, order="asc", after=None)
    last = await store.page(
        conversation_id, "alice", limit=1, order="asc", after="msg_8"
    )

    assert page.has_more is False
    assert len(page.items) == 9
    assert _texts(last.items) == ["9"]
    assert last.has_more is False
    assert page.body()["first_id"] == "msg_0"
    assert page.body()["last_id"] == "msg_9"


async def test_a_page_after_an_unknown_item_or_of_another_scope_is_refused(store):
    conversation_id = await _ten(store)

    with pytest.raises(AfterItemNotFound):
        await store.page(conversation_id, "alice", limit=5, order="asc", after="msg_5")
    assert (
        await store.page(conversation_id, "bob", limit=5, order="asc", after=None)
        is None
    )
    empty = _conversation()
    await store.create("alice", empty, [])
    page = await store.page(empty.id, "alice", limit=5, order="desc", after=None)
    assert page.items == []
    assert page.has_more is False
