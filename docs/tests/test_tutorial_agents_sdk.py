"""The Agents SDK tutorial: a client function tool round trip, run and streamed."""

from __future__ import annotations

import asyncio

import openai
import pytest
import weather_agent
from agents import Agent, ModelSettings, OpenAIResponsesModel, Runner
from conftest import expected_output
from openai import AsyncOpenAI


def test_agent_runs_its_own_tool_for_the_graph_and_gets_the_answer(serve, capsys):
    server = serve("weather_app")

    asyncio.run(weather_agent.main(server.base_url))

    assert capsys.readouterr().out == expected_output("weather_agent.out")


def test_an_offered_function_comes_back_as_a_function_call_item(serve):
    server = serve("weather_app")
    client = server.client()
    weather = {
        "type": "function",
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }

    offered = client.responses.create(model="weather", input="Hi", tools=[weather])

    (call,) = offered.output
    assert (call.type, call.name, call.arguments) == (
        "function_call",
        "get_weather",
        '{"city": "Lyon"}',
    )


def test_agent_model_settings_the_graph_cannot_honour_are_refused(serve):
    server = serve("weather_app")

    async def run_with_temperature() -> None:
        async with AsyncOpenAI(base_url=server.base_url, api_key="unused") as client:
            agent = Agent(
                name="assistant",
                model=OpenAIResponsesModel(model="weather", openai_client=client),
                model_settings=ModelSettings(temperature=0.2),
            )
            await Runner.run(agent, "Hi")

    with pytest.raises(openai.BadRequestError) as refused:
        asyncio.run(run_with_temperature())

    assert refused.value.body["param"] == "temperature"
