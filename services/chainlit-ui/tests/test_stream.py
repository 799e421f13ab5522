"""Stream rendering: commentary apart from the answer, token by token;
refusals, incomplete answers, citations, usage and server tools."""

from __future__ import annotations

import pytest
from lgos_chainlit.events import (
    AnswerDelta,
    CitationAdded,
    CommentaryDelta,
    CommentaryDone,
    CommentaryStarted,
    RefusalDelta,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from lgos_chainlit.presentation import sources_markdown, status_text, usage_text
from lgos_chainlit.stream import StreamError, read_stream
from ui_support import collect

pytestmark = pytest.mark.anyio


def _of(events, kind):
    return [e for e in events if isinstance(e, kind)]


async def test_commentary_is_a_separate_step_and_the_answer_streams_by_token(
    make_conversation,
):
    chat = await make_conversation("echo")

    events = await collect(chat.send("hello"))

    started, delta, done = events[:3]
    assert isinstance(started, CommentaryStarted)
    assert delta == CommentaryDelta(started.item_id, "Reading your message")
    assert done == CommentaryDone(started.item_id, "Reading your message")
    tokens = _of(events, AnswerDelta)
    assert len(tokens) > 5
    assert "".join(t.text for t in tokens).endswith("said=hello")
    assert "Reading" not in "".join(t.text for t in tokens)
    (finished,) = _of(events, TurnFinished)
    assert finished.status == "completed"
    assert usage_text(finished) == (
        f"{finished.input_tokens} in · {finished.output_tokens} out tokens"
    )
    assert finished.output_tokens > 0
    assert status_text(finished) == ""


async def test_url_citations_become_source_links(make_conversation):
    chat = await make_conversation("cite")

    events = await collect(chat.send("sources?"))

    citations = _of(events, CitationAdded)
    assert [(c.url, c.title, c.start_index, c.end_index) for c in citations] == [
        ("https://docs.example/lgos", "LGOS docs", 4, 11),
        ("https://blog.example/graphs", "Graphs blog", 4, 11),
    ]
    assert sources_markdown(citations) == (
        "**Sources**\n"
        "1. [LGOS docs](<https://docs.example/lgos>)\n"
        "2. [Graphs blog](<https://blog.example/graphs>)"
    )
    # The cited answer is replayed with its annotations on the next turn.
    assert chat.ledger.items[-1]["content"][0]["annotations"][0]["type"] == (
        "url_citation"
    )
    assert _of(await collect(chat.send("more")), TurnFinished)[0].status == "completed"


async def test_a_refusal_is_not_answer_text(make_conversation):
    chat = await make_conversation("refuse")

    events = await collect(chat.send("do the thing"))

    assert "".join(e.text for e in _of(events, RefusalDelta)) == "I won't do that."
    assert not _of(events, AnswerDelta)
    assert chat.ledger.items[-1]["content"] == [
        {"type": "refusal", "refusal": "I won't do that."}
    ]


async def test_an_incomplete_answer_is_marked_and_still_replayable(
    make_conversation,
):
    chat = await make_conversation("cut")

    events = await collect(chat.send("long story"))
    again = await collect(chat.send("go on"))

    (finished,) = _of(events, TurnFinished)
    assert (finished.status, finished.incomplete_reason) == (
        "incomplete",
        "max_output_tokens",
    )
    assert (
        status_text(finished) == "Incomplete answer: the answer hit its length limit."
    )
    assert chat.ledger.items[1]["status"] == "incomplete"
    assert _of(again, TurnFinished)[0].status == "incomplete"


async def test_selected_server_tools_show_their_activity(make_conversation, recorder):
    chat = await make_conversation("tools", tools=["package_version", "web_search"])

    events = await collect(chat.send("what version? search too"))

    assert recorder.bodies[-1]["tools"] == [
        {"type": "custom", "name": "package_version"},
        {"type": "web_search"},
    ]
    started = _of(events, ToolStarted)
    assert [(s.kind, s.name) for s in started] == [
        ("custom", "package_version"),
        ("web_search", "web_search"),
    ]
    finished = {f.name: f for f in _of(events, ToolFinished)}
    assert (finished["package_version"].input, finished["package_version"].output) == (
        "lgos",
        "lgos 1.2.3",
    )
    assert (finished["web_search"].input, finished["web_search"].status) == (
        "lgos graphs",
        "completed",
    )
    answer = "".join(e.text for e in _of(events, AnswerDelta))
    assert answer == "Results: lgos 1.2.3 | LGOS docs: LGOS serves graphs."
    # The completed tool items replay on the next turn.
    kinds = [item["type"] for item in chat.ledger.items]
    assert kinds == [
        "message",
        "custom_tool_call",
        "web_search_call",
        "custom_tool_call_output",
        "message",
    ]
    assert _of(await collect(chat.send("again")), TurnFinished)[0].status == "completed"


async def test_unselected_server_tools_are_not_sent(make_conversation, recorder):
    chat = await make_conversation("tools", tools=["not_a_tool"])

    events = await collect(chat.send("what version?"))

    assert "tools" not in recorder.bodies[-1]
    assert not _of(events, ToolStarted)


async def test_a_stream_without_a_terminal_event_is_an_error():
    class Event:
        type = "response.created"

    async def events():
        yield Event()

    with pytest.raises(StreamError, match="without a final response"):
        await collect(read_stream(events()))


def test_sources_skip_unsafe_links_and_duplicates():
    citations = [
        CitationAdded("javascript:alert(1)", "x", 0, 1),
        CitationAdded("https://a.example/x", "", 0, 1),
        CitationAdded("https://a.example/x", "again", 0, 1),
        CitationAdded("https://b.example/", "A [b]", 0, 1),
    ]

    assert sources_markdown(citations) == (
        "**Sources**\n"
        "1. [a\\.example](<https://a.example/x>)\n"
        "2. [A \\[b\\]](<https://b.example/>)"
    )
    assert sources_markdown([]) == ""
