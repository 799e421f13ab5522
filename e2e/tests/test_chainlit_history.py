"""Chainlit keeps each browser's chats with no login: a chat survives a
reload and a closed tab, listed in the sidebar; another browser (another
guest) does not see it."""

from __future__ import annotations

import re

from lgos_e2e.chainlit import ChainlitPage
from playwright.sync_api import Browser, BrowserContext, expect

QUESTION = "How are files stored, for my notes?"
ANSWER = "Here is what I found"


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
