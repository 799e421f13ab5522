"""Chainlit journeys: streaming, commentary, runtime settings and citations,
through LiteLLM to the demo graphs, in headless Chromium."""

from __future__ import annotations

import re

from lgos_e2e.chainlit import ChainlitPage
from playwright.sync_api import expect

USAGE = re.compile(r"\d+ in · \d+ out tokens")


def test_a_picked_graph_streams_its_answer_token_by_token(chainlit: ChainlitPage):
    chainlit.pick_graph("lgos/simple")
    chainlit.watch_answers()

    chainlit.send("What does a checkpoint hold?")

    answer = chainlit.answer_containing("What does a checkpoint hold?")
    expect(answer).to_contain_text("I am the offline demo model")
    expect(answer).to_contain_text(USAGE)
    final = answer.inner_text()
    growing = [text for text in chainlit.answer_texts() if final.startswith(text)]
    # Streamed: the page showed the answer at many lengths before it was whole.
    assert len(growing) >= 5, chainlit.answer_texts()
    assert len({len(text) for text in growing}) == len(growing)


def test_progress_is_live_open_and_above_its_answer(chainlit: ChainlitPage):
    chainlit.pick_graph("lgos/citations")
    answers_before = chainlit.answers.count()
    chainlit.watch_progress("Searching the docs for")

    chainlit.send("How are files stored?")

    # Live: the status was on the page before this request's answer.
    assert len(chainlit.answers_when_progress_appeared()) == answers_before
    answer = chainlit.answer_containing("Here is what I found")
    expect(answer).to_contain_text(USAGE)
    # One step for the request, open: its statuses read without a click.
    progress = chainlit.progress_steps
    expect(progress).to_have_count(1)
    expect(progress.get_by_text("Searching the docs for")).to_be_visible()
    expect(progress.get_by_text("Found 5 sources")).to_be_visible()
    expect(answer).not_to_contain_text("Searching the docs for")
    # Above the answer it belongs to.
    progress_box, answer_box = progress.bounding_box(), answer.bounding_box()
    assert progress_box is not None
    assert answer_box is not None
    assert progress_box["y"] + progress_box["height"] <= answer_box["y"]


def test_changing_the_audience_setting_changes_the_answer(chainlit: ChainlitPage):
    chainlit.pick_graph("lgos/simple")
    chainlit.send("Explain leases")
    expect(chainlit.answer_containing("Explain leases")).to_contain_text(
        "Answer for a general audience"
    )

    dialog = chainlit.open_settings()
    expect(dialog.get_by_text("Audience")).to_be_visible()
    chainlit.choose_setting("setting:audience", "expert")
    chainlit.confirm_settings(dialog)
    chainlit.send("Explain leases again")

    answer = chainlit.answer_containing("Explain leases again")
    expect(answer).to_contain_text("Answer for an expert audience")
    expect(answer).not_to_contain_text("general audience")


def test_the_citations_graph_lists_its_sources_as_links(chainlit: ChainlitPage):
    chainlit.pick_graph("lgos/citations")

    chainlit.send("How does the Files API keep its promises?")

    answer = chainlit.answer_containing("Here is what I found")
    expect(answer.get_by_text("Sources", exact=True)).to_be_visible()
    links = answer.get_by_role("link")
    expect(links.first).to_be_visible()
    expect(links.first).to_have_attribute("href", re.compile(r"^http://.+/docs/"))
    expect(answer).to_contain_text("[1]")


def test_the_web_search_graph_searches_without_switching_its_tool_on(
    chainlit: ChainlitPage,
):
    chainlit.pick_graph("lgos/web-search")
    dialog = chainlit.open_settings()
    # A new chat starts with the graph's server tools switched on.
    expect(dialog.get_by_role("switch", name="Server tool: web_search")).to_be_checked()
    chainlit.confirm_settings(dialog)

    chainlit.send("Search the web for how background runs are cancelled")

    answer = chainlit.last_answer
    expect(answer.get_by_text("Sources", exact=True)).to_be_visible()
    expect(answer.get_by_role("link").first).to_have_attribute(
        "href", re.compile(r"^http://.+/docs/")
    )
    expect(chainlit.page.locator('[data-step-type="tool"]').first).to_be_visible()


def test_a_new_chat_welcomes_on_citations_naming_the_graphs(chainlit: ChainlitPage):
    # Logged in: the first chat is on the default graph, before any message.
    expect(chainlit.page.locator("#chat-profiles")).to_have_text("lgos/citations")
    welcome = chainlit.page.locator("#welcome-screen")
    expect(welcome.get_by_role("heading", name="lgos/citations")).to_be_visible()
    expect(welcome).to_contain_text("Try it:")
    for other in ("lgos/simple", "lgos/interrupts", "lgos/file-display"):
        expect(welcome).to_contain_text(other)

    # What to try, one click away.
    welcome.get_by_role("button", name="How are files stored?").click()

    answer = chainlit.answer_containing("Here is what I found")
    expect(answer).to_contain_text(USAGE)
    expect(welcome).to_have_count(0)
