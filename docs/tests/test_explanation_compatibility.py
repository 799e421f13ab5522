"""The compatibility page's promises, checked against the getting-started app."""

from __future__ import annotations

import first_client
import openai
import pytest

REFUSED_RESPONSES = [
    ({"store": True}, "store"),
    ({"include": ["reasoning.encrypted_content"]}, "include"),
    ({"max_output_tokens": 50}, "max_output_tokens"),
    ({"temperature": 0}, "temperature"),
]
REFUSED_CHAT = [
    ({"temperature": 0}, "temperature"),
    ({"n": 2}, "n"),
    ({"response_format": {"type": "json_object"}}, "response_format.type"),
    (
        {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": {"type": "object"}},
            }
        },
        "response_format",
    ),
]


@pytest.mark.parametrize(("extra", "param"), REFUSED_RESPONSES)
def test_responses_refuse_what_a_graph_cannot_honour(serve, extra, param):
    client = serve("first_app").client()

    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="echo", input="Hi", **extra)

    assert refused.value.body["param"] == param


@pytest.mark.parametrize(("extra", "param"), REFUSED_CHAT)
def test_chat_refuses_generation_controls(serve, extra, param):
    client = serve("first_app").client()

    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(
            model="echo", messages=[{"role": "user", "content": "Hi"}], **extra
        )

    assert refused.value.body["param"] == param


def test_empty_defaults_are_accepted_and_usage_is_reported(serve):
    client = serve("first_app").client()

    reply = client.responses.create(model="echo", input="Hi", store=False, include=[])

    assert reply.output_text == "You said: Hi"
    assert reply.usage is not None
    assert reply.usage.output_tokens == 3


def test_foreground_responses_cannot_be_retrieved(serve):
    client = serve("first_app").client()
    reply = client.responses.create(model="echo", input="Hi")

    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(reply.id)


def test_output_text_glues_commentary_and_final_answer_picks_the_answer(serve):
    client = serve("research_app").client()

    with client.responses.stream(model="research", input="What is LangGraph?") as s:
        streamed = s.get_final_response()

    phases = [item.phase for item in streamed.output]
    assert phases == ["commentary", "commentary", "final_answer"]
    answer = "LangGraph builds agents as graphs [1]. I see 1 messages."
    glued = "Searching the LangGraph docsFound 1 source" + answer
    assert streamed.output_text == glued
    assert first_client.final_answer(streamed) == answer


def test_a_background_snapshot_carries_commentary_like_a_stream(serve):
    client = serve("report_app").client()
    job = client.responses.create(model="report", input="Report", background=True)
    for event in client.responses.retrieve(job.id, stream=True):
        if event.type == "response.completed":
            break

    done = client.responses.retrieve(job.id)

    assert [item.phase for item in done.output][-1] == "final_answer"
    assert "commentary" in [item.phase for item in done.output]
    assert done.output_text.startswith("Collecting figures")
    assert first_client.final_answer(done) == "Report ready: all steps done."
