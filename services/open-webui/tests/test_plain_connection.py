"""The plain connection: Open WebUI with LiteLLM as its OpenAI connection,
Chat Completions to LGOS with ``LGOS_CHAT_STATUS_AS_REASONING`` on.

Status arrives as ``reasoning_content`` deltas through LiteLLM, and Open
WebUI stores it as its own reasoning block (the collapsible "thought"
above the answer) with no ``<think>`` tags; citations become its sources.
"""

from __future__ import annotations

import uuid

import httpx
from openai import OpenAI
from owui_support import LITELLM_MASTER_KEY, stored_reply

QUESTION = "How do I upload files to the Files API?"
SEARCHING = f"Searching the docs for “{QUESTION}”"


def test_litellm_passes_status_on_as_reasoning_content(stack):
    with OpenAI(
        base_url=stack.gateway_url, api_key=LITELLM_MASTER_KEY, max_retries=0
    ) as client:
        chunks = list(
            client.chat.completions.create(
                model="lgos/citations",
                messages=[{"role": "user", "content": QUESTION}],
                stream=True,
            )
        )

    deltas = [chunk.choices[0].delta for chunk in chunks if chunk.choices]
    reasoning = "".join(
        (d.model_extra or {}).get("reasoning_content") or "" for d in deltas
    )
    answer = "".join(d.content or "" for d in deltas)
    assert reasoning.startswith(SEARCHING + "\n")
    assert "Found " in reasoning
    assert SEARCHING not in answer
    assert "[1]" in answer


def _send(http, model, text):
    """Send one message the way Open WebUI's own page does for a new chat;
    returns the assistant message's id and Open WebUI's answer."""
    user_id, reply_id = str(uuid.uuid4()), str(uuid.uuid4())
    body = {
        "model": model,
        "messages": [{"role": "user", "content": text}],
        "stream": True,
        "parent_id": None,
        "id": reply_id,
        "user_message": {"id": user_id, "role": "user", "content": text},
    }
    return reply_id, http.post("/api/chat/completions", json=body)


def _chat_turn(owui, token, model, text):
    """One message to a new chat, and the assistant message Open WebUI stored."""
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=owui.url, headers=headers, timeout=60) as http:
        reply_id, answer = _send(http, model, text)
        answer.raise_for_status()
        return stored_reply(http, reply_id)


def test_open_webui_shows_status_as_its_reasoning_block_and_cites_sources(
    owui, admin_token, stack
):
    mark = len(stack.requests)

    message = _chat_turn(owui, admin_token, "lgos/citations", QUESTION)

    reasoning, answer = message["output"]
    assert reasoning["type"] == "reasoning"
    (thought,) = reasoning["content"]
    assert thought["text"].startswith(SEARCHING)
    assert answer["type"] == "message"
    assert SEARCHING not in message["content"]
    assert "<think>" not in message["content"]
    assert {s["source"]["url"] for s in message["sources"]} == {
        s["metadata"][0]["source"] for s in message["sources"]
    }
    assert len(message["sources"]) >= 1
    # Title, tag and follow-up generation are off: one graph run, nothing else.
    assert stack.requests[mark:] == [("POST", "/v1/chat/completions")]


def test_an_interrupt_graph_over_the_plain_connection_is_refused(owui, admin_token):
    headers = {"Authorization": f"Bearer {admin_token}"}
    with httpx.Client(base_url=owui.url, headers=headers, timeout=60) as http:
        _, answer = _send(http, "lgos/interrupts", "Refund order 7")

    # Interrupts need the Responses API: the Function, not the plain connection.
    assert answer.status_code == 400
    assert "/v1/responses" in answer.text
