"""Chainlit keeps each browser's chats with no login: a chat survives a
reload and a closed tab, listed in the sidebar; another browser (another
guest) does not see it. A page reloaded while the answer comes shows the
rest of it as it comes."""

from __future__ import annotations

import re

from lgos_e2e.chainlit import ChainlitPage
from playwright.sync_api import Browser, BrowserContext, expect

QUESTION = "How are files stored, for my notes?"
ANSWER = "Here is what I found"
USAGE = re.compile(r"\d+ in · \d+ out tokens")
STEPS = 10
"""The demos' ``background`` graph at its most steps (1.5 s each): time
enough to reload the page mid-turn on a busy machine."""


def test_a_chat_is_kept_and_listed_after_a_reload_and_a_closed_tab(
    chainlit: ChainlitPage, context: BrowserContext, browser: Browser
):
    chainlit.send(QUESTION)
    expect(chainlit.answer_containing(ANSWER)).to_be_visible()
    expect(chainlit.page).to_have_url(re.compile(r"/thread/"))

    chainlit.page.reload()

    expect(chainlit.answer_containing(ANSWER)).to_be_visible()
    expect(chainlit.past_chats.get_by_text(QUESTION)).to_be_visible()

    chainlit.page.close()
    reopened = ChainlitPage(context.new_page(), chainlit.base_url)
    reopened.open()
    reopened.past_chats.get_by_text(QUESTION).click()

    expect(reopened.user_messages.filter(has_text=QUESTION)).to_be_visible()
    expect(reopened.answer_containing(ANSWER)).to_be_visible()

    stranger = browser.new_context()
    try:
        other = ChainlitPage(stranger.new_page(), chainlit.base_url)
        other.open()
        other.send("Hello from another browser")
        # Its own chat is listed: the list is loaded, and holds only its own.
        expect(other.past_chats.get_by_text("Hello from another")).to_be_visible()
        expect(other.past_chats.get_by_text(QUESTION)).to_have_count(0)
    finally:
        stranger.close()


def test_a_page_reloaded_mid_answer_shows_the_rest_as_it_comes(
    chainlit: ChainlitPage,
):
    # A foreground turn ("Run in background" stays off) of 10 steps.
    chainlit.pick_graph("lgos/background")
    dialog = chainlit.open_settings()
    chainlit.set_slider_to_maximum(dialog, "setting:steps")
    chainlit.confirm_settings(dialog)
    chainlit.send("Prepare the yearly report")
    expect(chainlit.progress_steps.get_by_text(f"Step 1/{STEPS}")).to_be_visible()
    # Reloaded once the chat has its own address, as a person reloads it:
    # before that, a reload opens a new chat (Chainlit's own behaviour).
    expect(chainlit.page).to_have_url(re.compile(r"/thread/"))

    chainlit.page.reload()

    # Still running on the reloaded page (its stop button), then the rest of
    # the steps and the answer arrive without another reload.
    expect(chainlit.user_messages.filter(has_text="yearly report")).to_be_visible()
    expect(chainlit.stop_button).to_be_visible()
    chainlit.watch_answers()  # the answer starts after the last step
    progress = chainlit.progress_steps
    expect(progress.get_by_text(f"Step {STEPS}/{STEPS}")).to_be_visible()
    answer = chainlit.answer_containing(f"finished after {STEPS} steps")
    expect(answer).to_contain_text(USAGE)
    expect(chainlit.stop_button).to_have_count(0)
    expect(progress).to_have_count(1)
    expect(chainlit.answers).to_have_count(1)
    # Streamed into the reloaded page: it showed the answer at many lengths.
    final = answer.inner_text()
    growing = [text for text in chainlit.answer_texts() if final.startswith(text)]
    assert len(growing) >= 5, chainlit.answer_texts()
