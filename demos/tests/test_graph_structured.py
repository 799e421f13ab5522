"""``structured``: generation controls and structured output reach the
model, and the answer is checked against the schema."""

from __future__ import annotations

import openai
import pytest
from pydantic import BaseModel


class Forecast(BaseModel):
    city: str
    celsius: float


def test_the_parse_helpers_get_json_matching_the_schema(api):
    parsed = api.responses.parse(
        model="structured", input="Forecast for Oslo?", text_format=Forecast
    )
    chat = api.chat.completions.parse(
        model="structured",
        messages=[{"role": "user", "content": "Forecast for Oslo?"}],
        response_format=Forecast,
        temperature=0.3,
        seed=7,
    )

    assert isinstance(parsed.output_parsed, Forecast)
    assert isinstance(chat.choices[0].message.parsed, Forecast)


def test_controls_reach_the_model(api):
    # The offline demo model honours the output limit and stop sequences.
    cut = api.chat.completions.create(
        model="structured",
        messages=[{"role": "user", "content": "Tell me about LGOS."}],
        max_tokens=3,
    )
    limited = api.responses.create(
        model="structured", input="Tell me about LGOS.", max_output_tokens=3
    )

    assert cut.choices[0].finish_reason == "length"
    assert len(cut.choices[0].message.content.split()) == 3
    assert limited.status == "incomplete"
    assert limited.incomplete_details.reason == "max_output_tokens"


def test_other_demo_graphs_keep_refusing_controls(api):
    with pytest.raises(openai.BadRequestError) as refused:
        api.chat.completions.create(
            model="simple",
            messages=[{"role": "user", "content": "Hi"}],
            temperature=0.3,
        )

    assert refused.value.body["param"] == "temperature"


def test_discovery_advertises_the_controls(api):
    lgos = api.models.retrieve("structured").model_extra["lgos"]

    assert lgos["features"] == ["structured_output"]
    assert lgos["generation_controls"] == [
        "frequency_penalty",
        "max_output_tokens",
        "presence_penalty",
        "seed",
        "stop",
        "temperature",
        "top_p",
    ]
