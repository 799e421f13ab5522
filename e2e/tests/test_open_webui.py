"""Open WebUI journeys: each demo graph listed once, a new chat's first
screen, and through Open WebUI's own connection to LiteLLM a streamed chat,
status commentary as the reasoning block, citations as sources, and a
pasted document through the gateway."""

from __future__ import annotations

import re

from lgos_e2e.open_webui import FUNCTION_PREFIX, OpenWebUIPage
from lgos_e2e.stack import PLAIN_MODELS
from playwright.sync_api import expect

GRAPHS = (
    "background",
    "citations",
    "file-display",
    "interrupts",
    "router",
    "server-tools",
    "simple",
    "structured",
    "web-search",
)


def test_each_graph_is_listed_once(open_webui: OpenWebUIPage):
    open_webui.open_model_list()

    page = open_webui.page
    for graph in GRAPHS:
        model = f"lgos/{graph}"
        plain = page.locator(f'[data-value="{model}"]')
        function = page.locator(f'[data-value="{FUNCTION_PREFIX}{model}"]')
        # The operator's plain models through Open WebUI's own connection,
        # every other graph through the LGOS Function; never both.
        if model in PLAIN_MODELS:
            expect(plain).to_have_count(1)
            expect(function).to_have_count(0)
        else:
            expect(function).to_have_text(f"LGOS · {model}")
            expect(plain).to_have_count(0)
    expect(page.locator('[data-value*="lgos/"]')).to_have_count(len(GRAPHS))


def test_a_new_chat_starts_on_citations_with_lgos_suggestions(
    open_webui: OpenWebUIPage,
):
    page = open_webui.page
    expect(page.locator("#model-selector-model-button")).to_have_attribute(
        "aria-label", re.compile(r"lgos/citations$")
    )
    suggestion = page.get_by_role("button", name=re.compile("^Ask the docs"))
    expect(suggestion).to_be_visible()

    suggestion.click()

    # A suggestion is sent at once, to the default graph, which answers it.
    expect(
        page.get_by_text("How do I upload files to the Files API?").first
    ).to_be_visible()
    expect(open_webui.last_answer).to_contain_text("Here is what I found")


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


def test_a_pasted_document_through_the_gateway_is_answered_with_sources(
    open_webui: OpenWebUIPage,
):
    # About 100 KB, through LiteLLM (which once answered a large body with
    # a 500) to the citations graph (which searches with its beginning).
    open_webui.pick_model("lgos/citations")

    open_webui.send("How do I upload files to the Files API? " * 2500)

    answer = open_webui.last_answer
    expect(answer).to_contain_text("Here is what I found")
    sources = answer.get_by_role("button", name=re.compile(r"^Toggle \d+ sources?$"))
    expect(sources).to_be_visible()
