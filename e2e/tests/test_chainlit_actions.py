"""Chainlit journeys with buttons and files: refund interrupts (also across a
reload), a CSV charted through ``display_file``, and background runs (steps
followed live through the gateway, the answer arriving, and cancelling one
with its button)."""

from __future__ import annotations

import re
from pathlib import Path

from lgos_e2e.chainlit import ChainlitPage
from playwright.sync_api import expect

QUESTION = "How should this refund request be handled?"


def _ask_for_a_refund(chainlit: ChainlitPage, order: str) -> None:
    chainlit.pick_graph("lgos/interrupts")
    chainlit.send(f"Refund order {order}, it arrived broken")
    question = chainlit.answer_containing(QUESTION)
    expect(question).to_contain_text(f"Refund order {order}")
    expect(chainlit.button("approve")).to_be_enabled()
    expect(chainlit.button("reject")).to_be_enabled()


def test_approving_a_refund_with_its_button_resumes_the_graph(
    chainlit: ChainlitPage,
):
    _ask_for_a_refund(chainlit, "4201")
    approve = chainlit.button("approve")
    # Drawn as a button (a border), not as muted text.
    assert approve.evaluate("b => getComputedStyle(b).borderTopWidth") != "0px"

    approve.click()

    answer = chainlit.answer_containing("Reviewer decision: approve")
    expect(answer).to_contain_text("The refund was approved")
    expect(chainlit.button("approve")).to_have_count(0)
    # The choice is in the chat, as the user's message.
    expect(chainlit.user_messages.filter(has_text="approve")).to_have_count(1)


def test_rejecting_a_refund_after_a_reload_while_paused(chainlit: ChainlitPage):
    _ask_for_a_refund(chainlit, "4202")
    expect(chainlit.page).to_have_url(re.compile(r"/thread/"))

    chainlit.page.reload()

    # The reopened chat asks the pending question again, with live buttons.
    expect(chainlit.answer_containing(QUESTION).last).to_be_visible()
    expect(chainlit.button("reject").last).to_be_enabled()
    chainlit.button("reject").last.click()

    answer = chainlit.answer_containing("Reviewer decision: reject")
    expect(answer).to_contain_text("The refund was rejected")


def test_an_uploaded_csv_comes_back_as_a_displayed_chart(
    chainlit: ChainlitPage, tmp_path: Path
):
    csv = tmp_path / "sales.csv"
    csv.write_text("month,sales\nJan,10\nFeb,14\nMar,9\n")
    chainlit.pick_graph("lgos/file-display")

    chainlit.attach(csv)
    chainlit.send("Chart this CSV please")

    chart = chainlit.page.locator('img[alt="sales-chart.svg"]')
    expect(chart).to_be_visible()
    # Decoded into real pixels, not a broken-image placeholder.
    assert chart.evaluate("i => i.decode().then(() => i.naturalWidth)") > 0
    # The graph's closing words say what happened, in words, not cut JSON.
    closing = chainlit.answer_containing("display_file reported")
    expect(closing).to_contain_text("display_file reported displayed: yes")
    expect(closing).to_contain_text("filename: sales-chart.svg")
    expect(closing).not_to_contain_text("{")


RUNNING = "Running in the background"
CANCELLED = "The background run was cancelled"


def _switch_to_background_runs(chainlit: ChainlitPage) -> None:
    """A chat on the demos' ``background`` graph (4 steps of 1.5 s, then the
    answer) with its "Run in background" switch on."""
    chainlit.pick_graph("lgos/background")
    dialog = chainlit.open_settings()
    dialog.get_by_role("switch", name="Run in background").click()
    chainlit.confirm_settings(dialog)


def _start_a_background_run(chainlit: ChainlitPage, text: str) -> None:
    _switch_to_background_runs(chainlit)
    chainlit.send(text)
    expect(chainlit.answer_containing(RUNNING)).to_be_visible()


def test_a_background_run_shows_its_answer_when_it_ends(chainlit: ChainlitPage):
    _start_a_background_run(chainlit, "Prepare the monthly report")
    # The handler returned: the run's Cancel button is live while it runs.
    expect(chainlit.button("Cancel")).to_be_enabled()

    answer = chainlit.answer_containing("finished after 4 steps")
    expect(answer).to_be_visible()
    expect(answer).to_contain_text("Step 4/4")
    # Shown from the run's snapshot, whose commentary comes before the answer:
    # the statuses are not glued to it.
    expect(answer).not_to_contain_text("All 4 steps done")
    expect(chainlit.button("Cancel")).to_have_count(0)
    expect(chainlit.page.get_by_text(CANCELLED)).to_have_count(0)


def test_a_background_run_shows_its_steps_live_through_the_gateway(
    chainlit: ChainlitPage,
):
    _switch_to_background_runs(chainlit)
    chainlit.watch_progress("Step 2/4")

    chainlit.send("Prepare the weekly report")

    # Followed live (LiteLLM's follow route): the second step's status was on
    # the page while the run still ran, before its answer.
    shown = chainlit.answers_when_progress_appeared()
    assert any(RUNNING in text for text in shown), shown
    assert not any("finished after" in text for text in shown), shown
    expect(chainlit.answer_containing("finished after 4 steps")).to_be_visible()
    expect(chainlit.progress_steps.get_by_text("Step 4/4")).to_be_visible()
    # The gateway's Response ids never reach the page.
    assert not re.search(r"resp_\w{20,}", chainlit.page.inner_text("body"))


def test_a_background_run_is_cancelled_with_its_button(chainlit: ChainlitPage):
    _start_a_background_run(chainlit, "Prepare the quarterly report")

    # Clicked as soon as it can be: the run has about 6 s of steps to go.
    chainlit.button("Cancel").click()

    expect(chainlit.answer_containing(CANCELLED)).to_be_visible()
    # Cancelled is terminal: no answer can arrive after it is shown.
    expect(chainlit.answer_containing("finished after")).to_have_count(0)
    expect(chainlit.button("Cancel")).to_have_count(0)
