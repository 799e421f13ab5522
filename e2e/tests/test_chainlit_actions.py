"""Chainlit journeys with buttons and files: refund interrupts (also across a
reload) and a CSV charted through ``display_file``."""

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

    chainlit.button("approve").click()

    answer = chainlit.answer_containing("Reviewer decision: approve")
    expect(answer).to_contain_text("The refund was approved")
    expect(chainlit.button("approve")).to_have_count(0)


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
    expect(chainlit.answer_containing("display_file returned")).to_contain_text(
        '"displayed"'
    )
