"""Open WebUI journeys: the demo graphs as models through LiteLLM, a streamed
chat, status commentary as the reasoning block, citations as sources."""

from __future__ import annotations

import re

from lgos_e2e.open_webui import OpenWebUIPage
from playwright.sync_api import expect

GRAPHS = (
    "background",
    "citations",
    "file-display",
    "interrupts",
    "router",
    "server-tools",
    "simple",
    "web-search",
)


def test_every_demo_graph_is_a_model_through_litellm(open_webui: OpenWebUIPage):
    options = open_webui.open_model_list()

    for graph in GRAPHS:
        expect(
            open_webui.page.get_by_role("option", name=f"Select lgos/{graph} model")
        ).to_be_visible()
    # LiteLLM's own entries (the LGOS Function adds its own, prefixed ones).
    expect(
        options.and_(open_webui.page.locator('[data-value^="lgos/"]'))
    ).to_have_count(len(GRAPHS))


def test_a_chat_streams_the_answer(open_webui: OpenWebUIPage):
    open_webui.pick_model("lgos/simple")
    open_webui.watch_answers()

    open_webui.send("What does a lease protect?")

    answer = open_webui.last_answer
    expect(answer).to_contain_text("You said: “What does a lease protect?”")
    expect(answer).to_contain_text("so this reply is scripted.")
    final = answer.inner_text()
    growing = [text for text in open_webui.answer_texts() if final.startswith(text)]
    assert len(growing) >= 5, open_webui.answer_texts()


def test_progress_appears_as_the_reasoning_block(open_webui: OpenWebUIPage):
    open_webui.pick_model("lgos/citations")

    open_webui.send("How are files stored?")

    answer = open_webui.last_answer
    expect(answer).to_contain_text("Here is what I found")
    thought = answer.get_by_text(re.compile(r"^Thought for"))
    expect(thought).to_be_visible()
    expect(answer.get_by_text("Searching the docs for")).to_be_hidden()
    thought.click()
    expect(answer.get_by_text(re.compile("Searching the docs for"))).to_be_visible()


def test_citations_show_as_sources(open_webui: OpenWebUIPage):
    open_webui.pick_model("lgos/citations")

    open_webui.send("How does the Files API keep its promises?")

    answer = open_webui.last_answer
    expect(answer).to_contain_text("Here is what I found")
    sources = answer.get_by_role("button", name=re.compile(r"^Toggle \d+ sources?$"))
    expect(sources).to_be_visible()
    inline = answer.get_by_role("button", name=re.compile(r"^View source: "))
    # At least two inline citation chips (they render as the text streams).
    expect(inline.nth(1)).to_be_visible()
