"""Stack journeys: what a person sees in Chainlit when a service of the
running stack dies, when the question is a pasted document, and when a
message is over the chat's size limit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from typing import Any

from lgos_e2e.chainlit import ChainlitPage
from lgos_e2e.stack import CHAINLIT_MAX_MESSAGE_BYTES
from lgos_testkit import wait_until
from lgos_testkit.stack import RunningStack
from playwright.sync_api import expect

WAIT = 180.0


def demo_api(stack: RunningStack) -> dict[str, Any]:
    services: dict[str, dict[str, Any]] = json.loads(
        (stack.state_dir / "stack.json").read_text()
    )["services"]
    return services["demo API"]


def test_after_the_demo_api_dies_it_comes_back_alone_and_chainlit_answers_again(
    chainlit: ChainlitPage, stack: RunningStack
):
    before = demo_api(stack)
    os.kill(before["pid"], signal.SIGTERM)

    def back() -> bool:
        now = demo_api(stack)
        return bool(now["restarts"] > before["restarts"] and now["state"] == "running")

    wait_until(back, WAIT, "the demo API restarted by the supervisor")
    status = subprocess.run(
        [
            sys.executable,
            "-m",
            "lgos_stack",
            "status",
            f"--state-dir={stack.state_dir}",
        ],
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    chainlit.pick_graph("lgos/simple")
    chainlit.send("Are you back?")

    expect(chainlit.answer_containing("Are you back?")).to_contain_text(
        "I am the offline demo model"
    )
    api_line = next(line for line in status.stdout.splitlines() if "demo API" in line)
    assert "healthy" in api_line
    assert f"restarts {before['restarts'] + 1}" in api_line
    assert status.returncode == 0, status.stdout


def test_a_pasted_document_to_citations_is_answered_with_sources(
    chainlit: ChainlitPage,
):
    chainlit.pick_graph("lgos/citations")

    chainlit.send("How do I upload files to the Files API? " * 2500)

    expect(chainlit.answer_containing("Here is what I found")).to_be_visible()


def test_a_message_over_the_size_limit_is_refused_where_it_was_typed(
    chainlit: ChainlitPage,
):
    chainlit.pick_graph("lgos/simple")
    sentence = "Please read all of this. "
    text = sentence * (CHAINLIT_MAX_MESSAGE_BYTES // len(sentence) + 400)

    chainlit.send(text)

    size = f"{len(text.encode()) / 1024:.0f} KB"
    limit = f"{CHAINLIT_MAX_MESSAGE_BYTES // 1024} KB"
    expect(
        chainlit.page.get_by_text(
            f"Your message is {size}; this chat accepts at most {limit}."
        )
    ).to_be_visible()
    # Nothing was sent to the graph, and the chat goes on.
    chainlit.send("Are you still there?")
    expect(chainlit.answer_containing("Are you still there?")).to_be_visible()
    expect(chainlit.answer_containing("You said")).to_have_count(1)
