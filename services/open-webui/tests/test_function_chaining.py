"""The Function on a deployment that keeps Responses, through the real LiteLLM
on the stack's seed configuration.

LGOS keeps Responses (``LGOS_RESPONSE_STORE=memory``; its models say
``stores_responses``, and the routes carry that into LiteLLM's model info)
and answers with the transcript its graph saw. Each answer ends with a hidden
marker naming its Response; the next turn names it (LiteLLM's id) with
``previous_response_id`` and sends only the new message, and the graph still
sees the whole chat. When LGOS no longer has that Response, the turn replays
the history instead.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import yaml
from fastapi import FastAPI
from langgraph_openai_serve import (
    GraphConfig,
    GraphRegistry,
    LanggraphOpenaiServe,
    Settings,
)
from lgos_stack.gateway import FOLLOW_TARGET_ENV, install_gateway_modules, seed_config
from lgos_testkit import ThreadServer, lgos_routes, litellm
from lgos_testkit.graphs import transcript_graph
from owui_support import LITELLM_MASTER_KEY, Recorder, chat, user

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(600)]

MODEL = "lgos/history"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Keeping:
    def __init__(self, lgos_url: str, gateway_url: str) -> None:
        self.lgos_url = lgos_url
        self.gateway_url = gateway_url

    async def input_items(self, function_module, marked_text: str) -> list[dict]:
        """What the turn that ended with ``marked_text`` was generated from,
        as LGOS kept it: the earlier turns of its chain, then what its
        request sent."""
        response_id = function_module.upstream_response_id(
            function_module.read_markers(marked_text).response_id
        )
        async with httpx.AsyncClient(timeout=30) as http:
            listed = await http.get(
                f"{self.lgos_url}/responses/{response_id}/input_items",
                params={"order": "asc"},
            )
        assert listed.status_code == 200, (response_id, listed.text)
        return list(listed.json()["data"])

    async def input_texts(self, function_module, marked_text: str) -> list[str]:
        items = await self.input_items(function_module, marked_text)
        return [item["content"][0]["text"] for item in items]

    async def output_ids(self, function_module, marked_text: str) -> list[str]:
        response_id = function_module.upstream_response_id(
            function_module.read_markers(marked_text).response_id
        )
        async with httpx.AsyncClient(timeout=30) as http:
            kept = await http.get(f"{self.lgos_url}/responses/{response_id}")
        assert kept.status_code == 200, (response_id, kept.text)
        return [item["id"] for item in kept.json()["output"]]

    async def delete(self, response_id: str) -> None:
        async with httpx.AsyncClient(timeout=30) as http:
            deleted = await http.delete(f"{self.lgos_url}/responses/{response_id}")
        assert deleted.status_code == 200, deleted.text


@pytest.fixture(scope="module")
def keeping(tmp_path_factory) -> Iterator[Keeping]:
    registry = {"history": GraphConfig(graph=transcript_graph(), description="x")}
    app = FastAPI()
    LanggraphOpenaiServe(
        graphs=GraphRegistry(registry=registry),
        app=app,
        settings=Settings(RESPONSE_STORE="memory"),
    ).bind_openai_api()
    with ThreadServer(app) as server:
        lgos_url = f"{server.url}/v1"
        # The stack's own gateway configuration, with this server's route.
        config = tmp_path_factory.mktemp("litellm") / "config.yaml"
        seed_config(config)
        install_gateway_modules(config.parent)
        document = yaml.safe_load(config.read_text())
        routes = lgos_routes(lgos_url, ["history"])
        config.write_text(yaml.safe_dump(document | {"model_list": routes}))
        target = {FOLLOW_TARGET_ENV: f"{lgos_url}/responses"}
        with litellm(config, LITELLM_MASTER_KEY, extra_env=target) as gateway:
            yield Keeping(lgos_url, f"{gateway.url}/v1")


@pytest.fixture
def pipe(function_module, keeping):
    instance = function_module.Pipe()
    instance.valves = function_module.Pipe.Valves(
        gateway_url=keeping.gateway_url, gateway_key=LITELLM_MASTER_KEY
    )
    return instance


def assistant(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}


async def test_each_turn_names_the_last_response_and_sends_only_itself(
    function_module, pipe, keeping
):
    recorder = Recorder()
    first = await chat(pipe, recorder, MODEL, [user("My name is Ada.")])
    history = [user("My name is Ada."), assistant(first), user("Who am I?")]
    second = await chat(pipe, recorder, MODEL, history)

    first_answer = function_module.read_markers(first).visible
    second_answer = function_module.read_markers(second).visible
    assert second_answer == (
        f"Saw human:My name is Ada. | ai:{first_answer} | human:Who am I?"
    )
    # The request sent only "Who am I?": the first turn's items come from the
    # chain, with the ids they have in the first Response.
    used = await keeping.input_items(function_module, second)
    first_items = await keeping.input_items(function_module, first)
    first_output = await keeping.output_ids(function_module, first)
    assert [item["content"][0]["text"] for item in used] == [
        "My name is Ada.",
        first_answer,
        "Who am I?",
    ]
    assert [item["id"] for item in used[:2]] == [
        *(item["id"] for item in first_items),
        *first_output,
    ]
    assert "lgos-response" not in first_answer


async def test_a_response_the_server_lost_makes_the_turn_replay_the_history(
    function_module, pipe, keeping
):
    recorder = Recorder()
    first = await chat(pipe, recorder, MODEL, [user("One.")])
    lost = function_module.upstream_response_id(
        function_module.read_markers(first).response_id
    )
    await keeping.delete(lost)

    history = [user("One."), assistant(first), user("Two.")]
    second = await chat(pipe, recorder, MODEL, history)

    first_answer = function_module.read_markers(first).visible
    assert function_module.read_markers(second).visible == (
        f"Saw human:One. | ai:{first_answer} | human:Two."
    )
    assert await keeping.input_texts(function_module, second) == [
        "One.",
        first_answer,
        "Two.",
    ]
