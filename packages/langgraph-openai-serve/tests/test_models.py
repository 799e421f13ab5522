"""Model discovery: ``/v1/models`` with the ``lgos`` extension."""

from __future__ import annotations

from enum import StrEnum

import openai
import pytest
from langgraph_openai_serve import ClientSettings, GraphFeature
from pydantic import Field
from support import config, scripted_graph

pytestmark = pytest.mark.anyio


class Audience(StrEnum):
    GENERAL = "general"
    EXPERT = "expert"


class PublicSettings(ClientSettings):
    use_history: bool = Field(default=False, title="Use conversation history")
    audience: Audience = Audience.GENERAL


def _graphs():
    return {
        "plain": config(scripted_graph("hi"), description="A plain graph."),
        "rich": config(
            scripted_graph("hi"),
            description="A graph with everything.",
            features={GraphFeature.CLIENT_EVENTS, GraphFeature.FILE_INPUTS},
            server_tools=["web_search", "package_version"],
            client_tools=["display_file"],
            client_settings=PublicSettings,
            context_factory=lambda request, settings: None,
        ),
    }


async def test_list_models_returns_every_graph_with_its_summary(make_client):
    client = make_client(_graphs())

    page = await client.models.list()

    models = {model.id: model for model in page.data}
    assert list(models) == ["plain", "rich"]
    rich = models["rich"]
    assert rich.object == "model"
    assert rich.owned_by == "langgraph-openai-serve"
    assert isinstance(rich.created, int)
    assert rich.model_extra["lgos"] == {
        "description": "A graph with everything.",
        "features": ["client_events", "file_inputs"],
        "server_tools": ["package_version", "web_search"],
        "client_tools": ["display_file"],
    }


async def test_list_models_keeps_client_settings_schemas_out(make_client):
    client = make_client(_graphs())

    page = await client.models.list()

    assert all("client_settings" not in m.model_extra["lgos"] for m in page.data)


async def test_retrieve_model_includes_client_settings_descriptor(make_client):
    client = make_client(_graphs())

    model = await client.models.retrieve("rich")

    settings = model.model_extra["lgos"]["client_settings"]
    assert settings["schema_version"] == 1
    assert settings["defaults"] == {"use_history": False, "audience": "general"}
    schema = settings["json_schema"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == {"use_history", "audience"}


async def test_retrieve_model_without_settings_has_complete_empty_extension(
    make_client,
):
    client = make_client(_graphs())

    model = await client.models.retrieve("plain")

    assert model.model_extra["lgos"] == {
        "description": "A plain graph.",
        "features": [],
        "server_tools": [],
        "client_tools": [],
    }


async def test_retrieve_unknown_model_returns_404_model_not_found(make_client):
    client = make_client(_graphs())

    with pytest.raises(openai.NotFoundError) as caught:
        await client.models.retrieve("missing")

    assert caught.value.body == {
        "message": "The model 'missing' does not exist.",
        "type": "invalid_request_error",
        "param": "model",
        "code": "model_not_found",
    }


async def test_health_reports_ok(make_client):
    client = make_client(_graphs())

    response = await client.get("/health", cast_to=object)

    assert response == {"status": "ok"}
