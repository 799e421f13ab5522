"""The input ledger: every output item replayed unchanged, kept on disk."""

from __future__ import annotations

import json

import pytest
from lgos_chainlit.chats import ChatState, ChatStore
from lgos_chainlit.events import AnswerDelta, Notice, TurnFinished
from lgos_chainlit.ledger import Ledger, function_output, user_message
from ui_support import collect

pytestmark = pytest.mark.anyio


def _answer(events: list[object]) -> str:
    return "".join(e.text for e in events if isinstance(e, AnswerDelta))


async def test_each_turn_replays_every_previous_item_unchanged(
    make_conversation, recorder
):
    chat = await make_conversation("echo")

    await collect(chat.send("hello"))
    first_items = chat.ledger.items
    events = await collect(chat.send("again"))

    first_output = first_items[1:]
    assert [item["type"] for item in first_output] == ["message", "message"]
    assert [item["phase"] for item in first_output] == ["commentary", "final_answer"]
    sent = recorder.bodies[-1]["input"]
    assert sent == [user_message("hello"), *first_output, user_message("again")]
    # The graph received the user turns and both assistant messages.
    assert "seen=4 said=again" in _answer(events)


async def test_output_items_keep_exactly_the_fields_the_server_sent(
    make_conversation,
):
    chat = await make_conversation("echo")
    await collect(chat.send("hello"))

    answer = chat.ledger.items[-1]
    assert set(answer) == {"id", "type", "role", "status", "phase", "content"}
    assert answer["content"][0].keys() == {"type", "text", "annotations", "logprobs"}
    assert answer["id"].startswith("msg_")


async def test_a_reloaded_chat_continues_from_its_saved_ledger(
    make_conversation, recorder, store, thread_id
):
    chat = await make_conversation("echo")
    await collect(chat.send("hello"))
    saved = store.load(thread_id)

    reloaded = await make_conversation("echo")
    events = await collect(reloaded.send("after reload"))

    assert saved is not None
    assert saved.items == chat.ledger.items
    assert recorder.bodies[-1]["input"] == [*saved.items, user_message("after reload")]
    assert "seen=4" in _answer(events)


async def test_a_refused_request_leaves_ledger_and_store_unchanged(
    make_conversation, store, thread_id
):
    chat = await make_conversation("echo")
    await collect(chat.send("hello"))
    before = store.path(thread_id).read_bytes()

    chat.state.settings = {"depth": 9}
    events = await collect(chat.send("too deep"))

    (notice,) = [e for e in events if isinstance(e, Notice)]
    assert notice.level == "error"
    assert "HTTP 400" in notice.text
    assert "depth" in notice.text
    assert not [e for e in events if isinstance(e, TurnFinished)]
    assert len(chat.ledger) == 3
    assert store.path(thread_id).read_bytes() == before


def test_user_messages_carry_text_and_file_parts():
    assert user_message("see", ["file-1", "file-2"]) == {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "see"},
            {"type": "input_file", "file_id": "file-1"},
            {"type": "input_file", "file_id": "file-2"},
        ],
    }
    assert user_message("", ["file-1"])["content"] == [
        {"type": "input_file", "file_id": "file-1"}
    ]


def test_unanswered_calls_are_the_calls_without_outputs():
    call = {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"}
    other = {**call, "call_id": "b"}
    ledger = Ledger([call, other, function_output("a", "done")])

    assert ledger.unanswered_calls() == ["b"]


def test_the_ledger_hands_out_copies():
    ledger = Ledger([user_message("hi")])
    ledger.items[0]["role"] = "assistant"
    ledger.request_input()[0]["content"].clear()

    assert ledger.items == [user_message("hi")]


def test_the_store_replaces_files_atomically_and_leaves_no_temp_files(tmp_path):
    store = ChatStore(tmp_path / "chats")
    state = ChatState(thread_id="t-1", model="echo", items=[user_message("hi")])

    store.save(state)
    state.items.append(user_message("again"))
    store.save(state)

    assert [p.name for p in (tmp_path / "chats").iterdir()] == ["t-1.json"]
    assert store.load("t-1") == state
    assert store.load("missing") is None


def test_thread_ids_that_are_not_safe_file_names_are_hashed(tmp_path):
    store = ChatStore(tmp_path)
    path = store.path("../../etc/passwd")

    assert path.parent == tmp_path
    assert path.name.startswith("h-")


def test_an_unknown_state_version_is_refused(tmp_path):
    store = ChatStore(tmp_path)
    store.path("t").write_text(json.dumps({"version": 99, "thread_id": "t"}))

    with pytest.raises(ValueError, match="version"):
        store.load("t")
