"""The demo model's scripting: pure functions from a request to a reply."""

from __future__ import annotations

import itertools
import json
import re

import pytest
from lgos_demos.demo_model.conversation import read_conversation
from lgos_demos.demo_model.script import script_reply
from lgos_demos.demo_model.tools import choose_enum, fill, read_tools
from lgos_demos.search.corpus import Corpus
from lgos_demos.sources import Source, format_sources

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}
SEARCH = {
    "type": "function",
    "function": {
        "name": "web_search",
        "description": "Search the web.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    },
}
# The flat custom declaration langchain-openai sends in Chat Completions mode.
PACKAGE_VERSION = {"type": "custom", "name": "package_version", "description": "x"}


def user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def ids():
    counter = itertools.count(1)
    return lambda: f"call_{next(counter)}"


def test_a_tool_is_called_when_the_user_mentions_it():
    reply = script_reply(user("What is the weather in Oslo?"), tools=[WEATHER, SEARCH])

    (call,) = reply.tool_calls
    assert (call.kind, call.name) == ("function", "get_weather")
    assert json.loads(call.arguments) == {"city": "Oslo"}
    assert reply.text == ""


def test_parallel_calls_each_get_their_own_sentence():
    reply = script_reply(
        user("How is the weather in Paris? Also search for LGOS citations."),
        tools=[WEATHER, SEARCH],
        new_id=ids(),
    )

    assert [(c.id, c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("call_1", "get_weather", {"city": "Paris"}),
        ("call_2", "web_search", {"query": "LGOS citations"}),
    ]


def test_parallel_tool_calls_false_makes_one_call():
    reply = script_reply(
        user("Weather in Rome, then search the web"),
        tools=[WEATHER, SEARCH],
        parallel_tool_calls=False,
    )

    assert [c.name for c in reply.tool_calls] == ["get_weather"]


def test_custom_tools_get_free_form_input():
    reply = script_reply(
        user("Which version of LangGraph is installed?"), tools=[PACKAGE_VERSION]
    )

    (call,) = reply.tool_calls
    assert (call.kind, call.arguments) == ("custom", "LangGraph")


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("none", []),
        ("auto", []),
        ("required", ["get_weather"]),
        ({"type": "function", "function": {"name": "web_search"}}, ["web_search"]),
        ({"type": "function", "name": "web_search"}, ["web_search"]),
    ],
)
def test_tool_choice_is_honoured(choice, expected):
    reply = script_reply(user("Hello"), tools=[WEATHER, SEARCH], tool_choice=choice)

    assert [c.name for c in reply.tool_calls] == expected


def test_after_tool_results_auto_answers_instead_of_looping():
    messages = [
        *user("Weather in Oslo?"),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Sunny, 21 °C. Light wind."},
    ]

    reply = script_reply(messages, tools=[WEATHER])

    assert reply.tool_calls == ()
    assert reply.text == "get_weather returned: Sunny, 21 °C."


def test_a_json_tool_result_is_reported_in_words_not_cut_json():
    messages = [
        *user("Chart it"),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "display_file", "arguments": "{}"},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": '{"displayed": true, "filename": "sales-chart.svg", '
            '"as": "image", "size": {"w": 1}}',
        },
    ]

    reply = script_reply(messages, tools=[WEATHER])

    assert reply.text == (
        "display_file reported displayed: yes, filename: sales-chart.svg, as: image."
    )


def test_numbered_sources_are_answered_with_citation_markers():
    sources = [
        Source("http://a/1", "One", "LGOS serves graphs. More text."),
        Source("http://a/2", "Two", "Files live in S3"),
    ]
    messages = [{"role": "system", "content": format_sources(sources)}, *user("Q?")]

    text = script_reply(messages).text

    assert text == "Here is what I found. LGOS serves graphs [1]. Files live in S3 [2]."


# Words no whole sentence ends with: a cited sentence ending in one was cut.
CLAUSE_OPENERS = frozenset(
    """a an the and or but nor of to from with for in on at by as into than which
    if when where while because its their our your my""".split()  # noqa: SIM905
)


def cited(snippet: str) -> str:
    """The sentence the demo model cites from a source with ``snippet``."""
    sources = [Source("http://a/1", "One", snippet)]
    messages = [{"role": "system", "content": format_sources(sources)}, *user("Q?")]
    return script_reply(messages).text.removeprefix("Here is what I found. ")


def test_a_cited_sentence_too_long_ends_after_its_last_whole_clause():
    long = (
        "Background runs return the queued Response at once; a follower streams "
        "its events from any API process, and a cancel stops it on whichever "
        "worker holds it, releasing the run's lease and keeping every event that "
        "was already stored for replay by later readers of the stream."
    )

    assert cited(long) == (
        "Background runs return the queued Response at once; a follower streams "
        "its events from any API process, and a cancel stops it on whichever "
        "worker holds it [1]."
    )


def test_a_snippet_cut_by_the_search_is_cited_up_to_its_last_whole_clause():
    cut = (
        "Keeps the model list in step with every deployment, so clients find "
        "each graph and read its details (description, features, tools) from…"
    )

    # Never cut inside the brackets: "(description, features [1]." is no sentence.
    assert cited(cut) == "Keeps the model list in step with every deployment [1]."


def test_a_sentence_that_introduced_a_code_block_ends_with_a_full_stop():
    assert cited("Register such graphs with a checkpointer:") == (
        "Register such graphs with a checkpointer [1]."
    )


def test_a_first_clause_longer_than_the_limit_is_cut_between_words_and_marked():
    words = " ".join(["word"] * 80)

    sentence = cited(words)

    assert sentence.endswith("word… [1].")
    assert len(sentence) < 240


def test_answers_from_the_bundled_docs_never_end_a_cited_sentence_mid_clause():
    corpus = Corpus.bundled()
    questions = [section.heading for section in corpus.sections]
    endings = []
    for question in questions:
        sources = [
            Source(f"http://docs/{n}", hit.section.heading, hit.snippet)
            for n, hit in enumerate(corpus.search(question, limit=3))
        ]
        messages = [
            {"role": "system", "content": format_sources(sources)},
            *user(question),
        ]
        text = script_reply(messages).text
        endings += re.findall(r"(\S+) \[\d\]\.", text)

    assert len(endings) > 50
    dangling = [word for word in endings if word.rstrip("…").lower() in CLAUSE_OPENERS]
    assert dangling == []
    assert not [word for word in endings if word.endswith((":", ",", ";", "—"))]


def test_an_empty_source_list_is_admitted():
    messages = [{"role": "system", "content": format_sources([])}, *user("Q?")]

    assert "found no sources" in script_reply(messages).text


def test_a_plain_reply_shows_instructions_and_visible_history():
    messages = [
        {"role": "system", "content": "Answer for an expert audience."},
        *user("First"),
        {"role": "assistant", "content": "ok"},
        *user("Second"),
    ]

    text = script_reply(messages).text

    assert text.startswith("You said: “Second”.")
    assert "My instructions: “Answer for an expert audience.”" in text
    assert "1 earlier message of yours; the last one was “First”" in text


def test_json_schema_response_format_gets_a_matching_object():
    schema = {
        "type": "object",
        "properties": {
            "route": {
                "enum": ["chat", "docs"],
                "description": "docs: questions about files or tools; chat: small talk",
            },
            "search_query": {"type": "string"},
        },
        "required": ["route", "search_query"],
        "additionalProperties": False,
    }
    format_ = {"type": "json_schema", "json_schema": {"name": "Plan", "schema": schema}}

    reply = script_reply(user("How are files stored?"), response_format=format_)

    assert json.loads(reply.text) == {"route": "docs", "search_query": "files stored"}


def test_enum_ties_go_to_the_first_value():
    conversation = read_conversation(user("Hello!"))

    assert (
        choose_enum(["chat", "docs"], "docs: files; chat: thanks", conversation)
        == "chat"
    )


def test_schema_filling_covers_common_types():
    conversation = read_conversation(
        [
            *user("Send 3 copies of file-abc123 to Bob"),
            {"role": "assistant", "content": "?"},
        ]
    )
    schema = {
        "type": "object",
        "properties": {
            "file_id": {"type": "string"},
            "count": {"type": "integer"},
            "urgent": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "note": {"anyOf": [{"type": "null"}, {"type": "string"}]},
            "kind": {"const": "copy"},
        },
    }

    value = fill(schema, conversation)

    assert value["file_id"] == "file-abc123"
    assert value["count"] == 3
    assert value["urgent"] is True
    assert value["kind"] == "copy"
    assert value["tags"] == [value["note"]]


def test_langchain_openai_message_shapes_are_read():
    """What ChatOpenAI sends after a custom tool ran, plus a file part."""
    messages = [
        {"role": "user", "content": [{"type": "file", "file": {"file_id": "file-1"}}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "type": "function",
                    "id": "c1",
                    "function": {
                        "name": "package_version",
                        "arguments": '{"__arg1": "x"}',
                    },
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": [{"type": "custom_tool_call_output", "output": "x 1.0"}],
        },
    ]

    conversation = read_conversation(messages)

    assert conversation.question == "(attached file file-1)"
    assert conversation.last_role == "tool"
    assert [(r.name, r.content) for r in conversation.tool_results] == [
        ("package_version", "x 1.0")
    ]


def test_unknown_tool_entries_are_skipped_not_rejected():
    tools = read_tools([{"type": "web_search"}, "junk", PACKAGE_VERSION, WEATHER])

    assert [(t.kind, t.name) for t in tools] == [
        ("custom", "package_version"),
        ("function", "get_weather"),
    ]
