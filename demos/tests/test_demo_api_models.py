"""The demo API lists every demo graph with what it supports."""

from __future__ import annotations

DEMOS = {
    "simple",
    "citations",
    "server-tools",
    "web-search",
    "file-display",
    "router",
    "structured",
    "interrupts",
    "background",
}


def test_every_demo_graph_is_listed_with_a_description(api):
    page = api.models.list()

    lgos = {model.id: model.model_extra["lgos"] for model in page.data}
    assert set(lgos) == DEMOS
    assert all(entry["description"] for entry in lgos.values())


def test_discovery_advertises_tools_features_and_settings(api):
    lgos = {m.id: m.model_extra["lgos"] for m in api.models.list().data}
    simple = api.models.retrieve("simple").model_extra["lgos"]

    assert lgos["server-tools"]["server_tools"] == ["package_version", "web_search"]
    assert lgos["web-search"]["server_tools"] == ["web_search"]
    assert lgos["file-display"]["client_tools"] == ["display_file"]
    assert set(lgos["file-display"]["features"]) == {"client_events", "file_inputs"}
    assert "client_events" in lgos["citations"]["features"]
    assert set(lgos["interrupts"]["features"]) == {"interrupts", "background"}
    assert set(lgos["background"]["features"]) == {"background", "client_events"}
    settings = simple["client_settings"]
    assert settings["defaults"] == {"audience": "general", "use_history": True}
    audience = settings["json_schema"]["properties"]["audience"]
    assert audience["enum"] == ["general", "expert", "child"]
