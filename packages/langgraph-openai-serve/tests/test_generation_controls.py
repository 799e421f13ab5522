"""Generation controls and structured output for graphs that declare them:
validated, handed over in ``GraphRequest``, advertised, and the answer
checked against the schema. Graphs that declare nothing keep the 400
(``test_chat_errors.py``, ``test_responses_errors.py``)."""

from __future__ import annotations

import json

import pytest
from langgraph_openai_serve import GenerationControl, GenerationOptions, GraphFeature
from langgraph_openai_serve.testing import ScriptedChatModel
from pydantic import BaseModel
from support import config, error_body, single_model_graph, sse_events

pytestmark = pytest.mark.anyio

ALL_CONTROLS = frozenset(GenerationControl)
WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
    "required": ["city", "celsius"],
    "additionalProperties": False,
}


class Weather(BaseModel):
    city: str
    celsius: float


@pytest.fixture
def seen():
    return []


@pytest.fixture
def graphs(seen):
    def graph(answer):
        def to_input(request, messages):
            seen.append(request)
            return {"messages": messages}

        model = ScriptedChatModel(responder=lambda _: answer)
        return single_model_graph(model), to_input

    def declared(answer, **options):
        built, to_input = graph(answer)
        return config(built, request_to_input=to_input, **options)

    good = json.dumps({"city": "Oslo", "celsius": 21})
    return {
        "tuned": declared("Tuned.", generation_controls=ALL_CONTROLS),
        "warm": declared("Warm.", generation_controls={GenerationControl.TEMPERATURE}),
        "structured": declared(good, features={GraphFeature.STRUCTURED_OUTPUT}),
        "sloppy": declared(
            json.dumps({"city": "Oslo", "celsius": "warm"}),
            features={GraphFeature.STRUCTURED_OUTPUT},
        ),
        "chatty": declared(
            "Sure! Here it is.", features={GraphFeature.STRUCTURED_OUTPUT}
        ),
    }


@pytest.fixture
def client(make_client, graphs):
    return make_client(graphs)


async def test_chat_controls_reach_a_graph_that_declares_them(client, seen):
    await client.chat.completions.create(
        model="tuned",
        messages=[{"role": "user", "content": "Hi"}],
        temperature=0.2,
        top_p=0.9,
        max_completion_tokens=64,
        stop="END",
        seed=7,
        presence_penalty=0.5,
        frequency_penalty=-0.5,
    )

    (request,) = seen
    assert request.generation == GenerationOptions(
        temperature=0.2,
        top_p=0.9,
        max_output_tokens=64,
        stop=("END",),
        seed=7,
        presence_penalty=0.5,
        frequency_penalty=-0.5,
    )
    assert request.generation.model_kwargs() == {
        "temperature": 0.2,
        "top_p": 0.9,
        "max_tokens": 64,
        "stop": ["END"],
        "seed": 7,
        "presence_penalty": 0.5,
        "frequency_penalty": -0.5,
    }
    assert request.output_schema is None


async def test_responses_controls_reach_a_graph_that_declares_them(client, seen):
    await client.responses.create(
        model="tuned", input="Hi", temperature=0, top_p=1, max_output_tokens=32
    )

    assert seen[0].generation.model_kwargs() == {
        "temperature": 0,
        "top_p": 1,
        "max_tokens": 32,
    }


async def test_a_request_without_controls_hands_over_none(client, seen):
    await client.responses.create(model="tuned", input="Hi")

    assert seen[0].generation == GenerationOptions()
    assert seen[0].generation.model_kwargs() == {}


async def test_an_undeclared_control_is_refused_naming_what_the_graph_accepts(
    client, seen
):
    refused = await error_body(
        client.chat.completions.create(
            model="warm",
            messages=[{"role": "user", "content": "Hi"}],
            temperature=1,
            max_tokens=5,
        ),
        400,
    )

    assert refused["param"] == "max_tokens"
    assert refused["message"].endswith("this model accepts temperature.")
    assert seen == []


async def test_one_long_stop_sequence_or_a_list_of_four(client, seen):
    for stop in ("Thank you for asking", ["a", "b", "c", "d"]):
        await client.chat.completions.create(
            model="tuned", messages=[{"role": "user", "content": "Hi"}], stop=stop
        )
    refused = await error_body(
        client.chat.completions.create(
            model="tuned",
            messages=[{"role": "user", "content": "Hi"}],
            stop=["a", "b", "c", "d", "e"],
        ),
        400,
    )

    assert [request.generation.stop for request in seen] == [
        ("Thank you for asking",),
        ("a", "b", "c", "d"),
    ]
    assert refused["param"] == "stop"


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"temperature": 2.5}, "temperature"),
        ({"top_p": -0.1}, "top_p"),
        ({"max_output_tokens": 0}, "max_output_tokens"),
    ],
)
async def test_out_of_range_controls_are_refused(client, fields, param):
    refused = await error_body(
        client.responses.create(model="tuned", input="Hi", **fields), 400
    )

    assert refused["param"] == param


async def test_the_sdk_parse_helpers_read_a_structured_answer(client, seen):
    parsed = await client.responses.parse(
        model="structured", input="Weather?", text_format=Weather
    )
    chat = await client.chat.completions.parse(
        model="structured",
        messages=[{"role": "user", "content": "Weather?"}],
        response_format=Weather,
    )

    assert parsed.output_parsed == Weather(city="Oslo", celsius=21)
    assert parsed.text.format.type == "json_schema"
    assert chat.choices[0].message.parsed == Weather(city="Oslo", celsius=21)
    wanted = seen[0].output_schema
    assert wanted.name == "Weather"
    assert wanted.schema["required"] == ["city", "celsius"]
    assert wanted.as_json_schema()["title"] == "Weather"


def _schema_format(schema=None):
    return {
        "format": {
            "type": "json_schema",
            "name": "weather",
            "schema": WEATHER_SCHEMA if schema is None else schema,
            "strict": True,
        }
    }


@pytest.mark.parametrize(
    ("model", "reason"),
    [
        ("sloppy", "'warm' is not of type 'number' (at $.celsius)"),
        ("chatty", "is not JSON"),
    ],
)
async def test_an_answer_off_the_schema_fails_clearly(client, model, reason):
    failed = await error_body(
        client.responses.create(model=model, input="Hi", text=_schema_format()), 500
    )
    chat_failed = await error_body(
        client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": "Hi"}],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "weather", "schema": WEATHER_SCHEMA},
            },
        ),
        500,
    )

    for error in (failed, chat_failed):
        assert error["code"] == "invalid_structured_output"
        assert "schema 'weather'" in error["message"]
        assert reason in error["message"]


async def test_a_streamed_answer_off_the_schema_ends_failed(client):
    response = await client._client.post(
        "/v1/responses",
        json={
            "model": "sloppy",
            "input": "Hi",
            "stream": True,
            "text": _schema_format(),
        },
    )
    events = sse_events(response.text)

    assert events[-1]["type"] == "response.failed"
    error = events[-1]["response"]["error"]
    assert error["code"] == "invalid_structured_output"
    assert "(at $.celsius)" in error["message"]


async def test_a_schema_that_is_not_one_is_refused(client):
    refused = await error_body(
        client.responses.create(
            model="structured", input="Hi", text=_schema_format({"type": "nothing"})
        ),
        400,
    )

    assert refused["param"] == "text.format.schema"


async def test_models_advertise_what_each_graph_accepts(client):
    tuned = await client.models.retrieve("tuned")
    structured = await client.models.retrieve("structured")
    listed = {model.id: model for model in (await client.models.list()).data}

    assert tuned.model_extra["lgos"]["generation_controls"] == sorted(
        control.value for control in GenerationControl
    )
    assert "generation_controls" not in structured.model_extra["lgos"]
    assert structured.model_extra["lgos"]["features"] == ["structured_output"]
    assert listed["structured"].model_extra["lgos"]["features"] == ["structured_output"]
