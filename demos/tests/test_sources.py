"""Numbered sources in prompts and citations for the markers in answers."""

from __future__ import annotations

from langchain_core.messages import AIMessage
from langgraph_openai_serve import citation_slice
from lgos_demos.sources import Source, cite, cited_message, format_sources, read_sources

SOURCES = [
    Source("https://a.example/1", "First", "One fact."),
    Source("https://b.example/2", "Second", "Two facts."),
]


def test_formatted_sources_read_back():
    assert read_sources(format_sources(SOURCES)) == SOURCES


def test_each_known_marker_cites_its_sentence():
    text = "Intro. Fact one [1]. Fact two [2]. Made up [7]."

    citations = cite(text, SOURCES)

    assert [(c["url"], c["cited_text"]) for c in citations] == [
        ("https://a.example/1", "Fact one [1]"),
        ("https://b.example/2", "Fact two [2]"),
    ]
    for c in citations:
        assert (
            text[citation_slice(c["start_index"], c["end_index"], text)]
            == c["cited_text"]
        )


def test_a_reply_without_markers_is_unchanged():
    reply = AIMessage(content="No markers here.", id="m1")

    assert cited_message(reply, SOURCES) is reply


def test_cited_message_keeps_text_and_id():
    reply = AIMessage(content="See [2].", id="m1")

    cited = cited_message(reply, SOURCES)

    assert (cited.text, cited.id) == ("See [2].", "m1")
    assert cited.content[0]["annotations"][0]["url"] == "https://b.example/2"
