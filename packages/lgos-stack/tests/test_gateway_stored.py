"""Kept Responses through the gateway: LiteLLM rewrites Response ids.

The real LiteLLM proxy on the stack's configuration, in front of a
real LGOS server that keeps Responses (``LGOS_RESPONSE_STORE=memory``, a
graph that answers with the transcript it saw). Through LiteLLM's ``/v1``
with the official SDK, a client chains turns with ``previous_response_id``,
retrieves Responses, lists their input items and deletes them, all by the
gateway's ids: LiteLLM decodes them to LGOS's and routes each request to the
deployment that made it; a 404 does not take the graph out of service. Both
the native stack's and compose's configurations.
"""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest
from fastapi import FastAPI
from gateway_configs import MASTER_KEY, compose_config, native_config
from langgraph_openai_serve import (
    GraphConfig,
    GraphRegistry,
    LanggraphOpenaiServe,
    Settings,
)
from lgos_chainlit.gateway_ids import upstream_response_id
from lgos_testkit import ThreadServer, lgos_routes
from lgos_testkit.graphs import transcript_graph
from lgos_testkit.litellm import litellm

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def lgos_url() -> Iterator[str]:
    graphs = GraphRegistry(
        registry={"history": GraphConfig(graph=transcript_graph(), description="x")}
    )
    app = FastAPI()
    LanggraphOpenaiServe(
        graphs=graphs, app=app, settings=Settings(RESPONSE_STORE="memory")
    ).bind_openai_api()
    with ThreadServer(app) as server:
        yield f"{server.url}/v1"


@pytest.fixture(scope="module", params=["native", "compose"])
def client(request, tmp_path_factory, lgos_url) -> Iterator[openai.OpenAI]:
    folder = tmp_path_factory.mktemp(request.param)
    write = native_config if request.param == "native" else compose_config
    config, env = write(folder, lgos_url, lgos_routes(lgos_url, ["history"]))
    with (
        litellm(config, MASTER_KEY, extra_env=env) as proxy,
        openai.OpenAI(
            base_url=proxy.openai_url, api_key=MASTER_KEY, max_retries=0, timeout=120
        ) as sdk,
    ):
        yield sdk


def test_turns_chain_through_the_gateway_by_its_ids(client):
    first = client.responses.create(model="lgos/history", input="My name is Ada.")
    second = client.responses.create(
        model="lgos/history", input="Who am I?", previous_response_id=first.id
    )

    assert first.id != upstream_response_id(first.id)
    assert second.output_text == (
        f"Saw human:My name is Ada. | ai:{first.output_text} | human:Who am I?"
    )


def test_a_response_is_retrieved_and_deleted_through_the_gateway(client):
    kept = client.responses.create(model="lgos/history", input="Keep this.")

    retrieved = client.responses.retrieve(kept.id)
    items = client.responses.input_items.list(kept.id)
    client.responses.delete(kept.id)

    assert retrieved.output_text == kept.output_text
    assert upstream_response_id(retrieved.id) == upstream_response_id(kept.id)
    assert [item.content[0].text for item in items.data] == ["Keep this."]
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(kept.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.create(
            model="lgos/history", input="Again?", previous_response_id=kept.id
        )
    # Those 404s did not take the graph's route out of service (LiteLLM's
    # cooldown is off in both configurations).
    after = client.responses.create(model="lgos/history", input="Still there?")
    assert after.output_text == "Saw human:Still there?"
