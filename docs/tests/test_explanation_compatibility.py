"""The compatibility page's promises, checked against the getting-started app."""

from __future__ import annotations

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
    ({"response_format": {"type": "json_object"}}, "response_format"),
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
