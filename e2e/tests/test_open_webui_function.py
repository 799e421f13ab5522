"""Open WebUI journeys through the LGOS Function (the stack installs it with
``lgos-open-webui-sync``): status lines, sources, an interrupt answered in
Open WebUI's question dialog."""

from __future__ import annotations

import re
from pathlib import Path

from lgos_e2e.open_webui import FUNCTION_PREFIX, OpenWebUIPage
from playwright.sync_api import expect


def test_status_lines_and_sources_from_the_function(open_webui: OpenWebUIPage):
    # The router searches the docs for a docs question, with status updates.
    open_webui.pick_model(f"{FUNCTION_PREFIX}lgos/router")

    open_webui.send("How do I configure the Files API settings?")

    answer = open_webui.last_answer
    expect(answer).to_contain_text("Here is what I found")
    expect(answer.get_by_text(re.compile(r"^Found \d+ sources?$"))).to_be_visible()
    sources = answer.get_by_role("button", name=re.compile(r"^Toggle \d+ sources?$"))
    expect(sources).to_be_visible()
    expect(
        answer.get_by_role("button", name=re.compile(r"^View source: ")).first
    ).to_be_visible()


def test_a_refund_question_is_answered_in_the_dialog(open_webui: OpenWebUIPage):
    open_webui.pick_model(f"{FUNCTION_PREFIX}lgos/interrupts")

    open_webui.send("Refund order 5150, it arrived broken")

    page = open_webui.page
    expect(
        page.get_by_text("How should this refund request be handled?")
    ).to_be_visible()
    submit = page.get_by_role("button", name="Submit answers")
    expect(submit).to_be_disabled()
    # With one question, picking a choice answers it.
    page.get_by_role("button", name=re.compile(r"^reject")).click()

    answer = open_webui.last_answer
    expect(answer).to_contain_text("Reviewer decision: reject")
    expect(answer).to_contain_text("The refund was rejected")
    expect(submit).to_have_count(0)


def test_an_uploaded_csv_is_charted_and_displayed(
    open_webui: OpenWebUIPage, tmp_path: Path
):
    csv = tmp_path / "sales.csv"
    csv.write_text("month,sales\nJan,10\nFeb,14\nMar,9\n")
    open_webui.pick_model(f"{FUNCTION_PREFIX}lgos/file-display")

    open_webui.attach(csv)
    open_webui.send("Chart this CSV please")

    answer = open_webui.last_answer
    chart = answer.locator('img[alt="sales-chart.svg"]')
    expect(chart).to_be_visible()
    # Decoded into real pixels, not a broken-image placeholder.
    assert chart.evaluate("i => i.decode().then(() => i.naturalWidth)") > 0
    # The demo model reports the tool's JSON result in words.
    expect(answer).to_contain_text("display_file reported displayed: yes")
    expect(answer).not_to_contain_text("{")
