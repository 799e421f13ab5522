"""One turn at a time, for every ``ConversationStore``: memory and
PostgreSQL (each test runs against both backends, the ``backend`` fixture of
``backend_fixtures.py``: the Conversations beside the Responses, as a server
has them)."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest
from langgraph_openai_serve.conversations.errors import ConversationLockedError
from langgraph_openai_serve.conversations.protocol import Conversation
from langgraph_openai_serve.responses.protocol import BackgroundJob
from lgos_testkit import async_wait_until

pytestmark = pytest.mark.anyio

LEASE = 60.0
"""Longer than any test: a claim never lapses unless a test wants it to."""


@pytest.fixture
def store(backend):
    return backend.conversations


async def _conversation(store, *texts: str) -> str:
    conversation = Conversation(f"conv_{uuid.uuid4().hex}", int(time.time()), {})
    await store.create("alice", conversation, [_item(text) for text in texts])
    return conversation.id


def _item(text: str) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex}",
        "type": "message",
        "role": "user",
        "status": "completed",
        "content": [{"type": "input_text", "text": text}],
    }


def _texts(items: list[dict[str, Any]] | None) -> list[str]:
    assert items is not None
    return [item["content"][0]["text"] for item in items]


def _response(status: str = "completed") -> dict[str, Any]:
    return {"id": f"resp_{uuid.uuid4().hex}", "object": "response", "status": status}


async def _refused(call) -> None:
    with pytest.raises(ConversationLockedError):
        await call


async def test_a_claim_reads_the_items_and_refuses_another_claim_and_added_items(
    store,
):
    conversation = await _conversation(store, "hello")

    history = await store.begin_turn(conversation, "alice", "turn_a", lease=LEASE)

    assert _texts(history) == ["hello"]
    await _refused(store.begin_turn(conversation, "alice", "turn_b", lease=LEASE))
    await _refused(store.add_items(conversation, "alice", [_item("typed")]))
    assert _texts(await store.items(conversation, "alice")) == ["hello"]


async def test_unknown_and_other_scopes_conversations_are_not_claimed(store):
    conversation = await _conversation(store)

    assert await store.begin_turn("conv_unknown", "alice", "t", lease=LEASE) is None
    assert await store.begin_turn(conversation, "bob", "t", lease=LEASE) is None
    assert await store.begin_turn(conversation, "alice", "t", lease=LEASE) == []


async def test_adding_the_turn_ends_its_claim_and_the_next_turn_reads_it(store):
    conversation = await _conversation(store, "first question")
    await store.begin_turn(conversation, "alice", "turn_a", lease=LEASE)

    await store.add_items(
        conversation,
        "alice",
        [_item("second question"), _item("answer")],
        response_id="resp_a",
        holder="turn_a",
    )
    history = await store.begin_turn(conversation, "alice", "turn_b", lease=LEASE)

    assert _texts(history) == ["first question", "second question", "answer"]
    assert not await store.renew_turn(conversation, "turn_a", lease=LEASE)


async def test_a_turn_given_up_frees_the_conversation_and_cannot_be_renewed(store):
    conversation = await _conversation(store)
    await store.begin_turn(conversation, "alice", "turn_a", lease=LEASE)
    assert await store.renew_turn(conversation, "turn_a", lease=LEASE)

    await store.end_turn(conversation, "turn_a")
    # Ending someone else's claim changes nothing.
    await store.begin_turn(conversation, "alice", "turn_b", lease=LEASE)
    await store.end_turn(conversation, "turn_a")

    assert not await store.renew_turn(conversation, "turn_a", lease=LEASE)
    await _refused(store.begin_turn(conversation, "alice", "turn_c", lease=LEASE))


async def test_a_claim_nobody_renews_lapses_and_a_renewed_one_does_not(store):
    lapsing = await _conversation(store)
    renewed = await _conversation(store)
    await store.begin_turn(lapsing, "alice", "dead", lease=0.2)
    await store.begin_turn(renewed, "alice", "alive", lease=0.2)
    assert await store.renew_turn(renewed, "alive", lease=LEASE)

    await async_wait_until(
        lambda: _claims(store, lapsing, "next"), 30, "the unrenewed claim to lapse"
    )

    # By now the renewed claim's first lease has long passed.
    await _refused(store.begin_turn(renewed, "alice", "next", lease=LEASE))
    assert not await store.renew_turn(lapsing, "dead", lease=LEASE)


async def test_a_background_response_keeps_its_claim_until_it_ends(store, backend):
    conversation = await _conversation(store)
    queued = _response("queued")
    job = BackgroundJob(response_id=queued["id"], scope="alice", body={})
    # Claimed in the Response's name before it is stored, with a short lease
    # that covers only the submit.
    await store.begin_turn(conversation, "alice", queued["id"], lease=0.2)
    await backend.responses.create(job, queued)
    # The worker adds the turn (the claim's own end) before the Response ends.
    await store.add_items(
        conversation,
        "alice",
        [_item("question"), _item("answer")],
        response_id=queued["id"],
        holder=queued["id"],
    )
    await asyncio.sleep(0.3)  # past the lease: only the Response holds it now

    await _refused(store.begin_turn(conversation, "alice", "next", lease=LEASE))
    await _refused(store.add_items(conversation, "alice", [_item("typed")]))
    await backend.responses.set_snapshot(
        queued["id"], {**queued, "status": "completed"}
    )
    history = await store.begin_turn(conversation, "alice", "next", lease=LEASE)

    assert _texts(history) == ["question", "answer"]


async def test_a_turn_adds_its_items_even_when_another_holds_the_conversation(store):
    # A turn that ran is never refused (its claim lapsed while it ran).
    conversation = await _conversation(store)
    await store.begin_turn(conversation, "alice", "late", lease=0.01)
    await async_wait_until(
        lambda: _claims(store, conversation, "other"), 30, "the late claim to lapse"
    )

    await store.add_items(
        conversation, "alice", [_item("late answer")], response_id="r", holder="late"
    )

    assert _texts(await store.items(conversation, "alice")) == ["late answer"]
    await _refused(store.begin_turn(conversation, "alice", "third", lease=LEASE))


async def test_concurrent_claims_have_exactly_one_winner(store):
    conversation = await _conversation(store, "hello")

    results = await asyncio.gather(
        *(
            store.begin_turn(conversation, "alice", f"turn_{n}", lease=LEASE)
            for n in range(8)
        ),
        return_exceptions=True,
    )

    won = [r for r in results if not isinstance(r, BaseException)]
    lost = [r for r in results if isinstance(r, BaseException)]
    assert [_texts(history) for history in won] == [["hello"]]
    assert len(lost) == 7
    assert all(isinstance(error, ConversationLockedError) for error in lost)


async def _claims(store, conversation: str, holder: str) -> bool:
    try:
        await store.begin_turn(conversation, "alice", holder, lease=LEASE)
    except ConversationLockedError:
        return False
    return True
