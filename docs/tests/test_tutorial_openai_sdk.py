"""The OpenAI SDK tutorial: commentary, citations and client-kept history."""

from __future__ import annotations

import openai
import pytest
import research_client
from conftest import expected_output


def test_research_client_prints_statuses_answer_source_and_follow_up(serve, capsys):
    server = serve("research_app")

    research_client.main(server.base_url)

    assert capsys.readouterr().out == expected_output("research_client.out")


def test_commentary_is_streaming_only(serve):
    server = serve("research_app")
    client = server.client()

    response = client.responses.create(model="research", input="What is LangGraph?")

    assert [item.phase for item in response.output] == ["final_answer"]
    assert response.output_text.startswith("LangGraph builds agents as graphs [1].")


def test_chat_completions_streams_the_answer_without_statuses(serve):
    server = serve("research_app")
    client = server.client()

    stream = client.chat.completions.create(
        model="research",
        messages=[{"role": "user", "content": "What is LangGraph?"}],
        stream=True,
    )
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)

    assert text == "LangGraph builds agents as graphs [1]. I see 1 messages."


def test_errors_are_the_openai_envelope_the_sdk_raises(serve):
    server = serve("research_app")
    client = server.client()

    with pytest.raises(openai.NotFoundError) as missing:
        client.responses.create(model="nope", input="Hi")
    with pytest.raises(openai.BadRequestError) as unsupported:
        client.responses.create(model="research", input="Hi", temperature=0.2)

    assert missing.value.code == "model_not_found"
    assert unsupported.value.body["param"] == "temperature"


def test_chat_streams_can_carry_statuses_as_reasoning_content(serve, monkeypatch):
    monkeypatch.setenv("LGOS_CHAT_STATUS_AS_REASONING", "true")
    client = serve("research_app").client()

    stream = client.chat.completions.create(
        model="research",
        messages=[{"role": "user", "content": "What is LangGraph?"}],
        stream=True,
    )
    deltas = [chunk.choices[0].delta for chunk in stream if chunk.choices]
    reasoning = [d.model_extra.get("reasoning_content") for d in deltas]

    assert [r for r in reasoning if r] == [
        "Searching the LangGraph docs\n",
        "Found 1 source\n",
    ]
