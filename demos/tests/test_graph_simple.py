"""``simple``: runtime settings change the answer."""

from __future__ import annotations

import json

import openai
import pytest
from demo_support import chat_text, deltas, drain

HISTORY = [
    {"role": "user", "content": "My name is Ada."},
    {"role": "assistant", "content": "Hello Ada."},
    {"role": "user", "content": "What is LGOS?"},
]


def test_chat_defaults_answer_for_a_general_audience_with_history(api):
    reply = api.chat.completions.create(model="simple", messages=HISTORY)

    text = reply.choices[0].message.content
    assert "general audience" in text
    assert "1 earlier message of yours" in text
    assert "My name is Ada." in text
    assert reply.usage.completion_tokens > 0


def test_chat_stream_equals_the_non_streamed_answer(api):
    stream = api.chat.completions.create(
        model="simple",
        messages=HISTORY,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)

    assert chat_text(chunks).startswith("You said: “What is LGOS?”.")
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens > 0


def test_settings_change_audience_and_hide_history_on_responses(api):
    settings = json.dumps({"audience": "expert", "use_history": False})

    events, final = drain(
        api.responses.create(
            model="simple",
            input=HISTORY,
            metadata={"lgos_settings": settings},
            stream=True,
        )
    )

    text = final.output_text
    assert deltas(events, final) == text
    assert "expert audience" in text
    assert "I see no earlier messages" in text
    assert "Ada" not in text


def test_invalid_settings_are_rejected(api):
    with pytest.raises(openai.BadRequestError) as caught:
        api.responses.create(
            model="simple",
            input="Hi",
            metadata={"lgos_settings": json.dumps({"audience": "robots"})},
        )

    assert caught.value.body["param"] == "metadata.lgos_settings"
