"""Runtime settings: schema -> fields, widget values, compact encoding, and
what LGOS receives."""

from __future__ import annotations

import json

import pytest
from lgos_chainlit.catalog import GraphInfo, LgosCatalog
from lgos_chainlit.events import AnswerDelta
from lgos_chainlit.request_parts import Exchange, create_options
from lgos_chainlit.runtime_settings import (
    SettingField,
    SettingsError,
    changed_settings,
    encode_settings,
    from_widget,
    request_metadata,
    setting_fields,
    to_widget,
)
from ui_support import collect

pytestmark = pytest.mark.anyio


@pytest.fixture
async def echo_fields(client) -> list[SettingField]:
    graph = await LgosCatalog(client).describe("echo")
    return setting_fields(graph.client_settings)


async def test_the_advertised_schema_becomes_fields_with_its_defaults(echo_fields):
    by_name = {field.name: field for field in echo_fields}

    assert [field.name for field in echo_fields] == [
        "audience",
        "use_history",
        "depth",
        "signature",
    ]
    assert by_name["audience"].kind == "select"
    assert by_name["audience"].choices == ("general", "beginner", "expert")
    assert by_name["audience"].default == "general"
    assert (by_name["use_history"].kind, by_name["use_history"].default) == (
        "switch",
        False,
    )
    depth = by_name["depth"]
    assert (depth.kind, depth.integer, depth.minimum, depth.maximum, depth.step) == (
        "slider",
        True,
        1,
        5,
        1,
    )
    assert depth.default == 2
    assert depth.description == "How deep to go."
    assert (by_name["signature"].kind, by_name["signature"].default) == ("text", "LGOS")


async def test_only_changed_values_are_encoded_compactly(echo_fields):
    widgets = {
        "audience": to_widget(echo_fields[0], "expert"),
        "use_history": False,
        "depth": 4.0,
        "signature": "LGOS",
    }
    values = {
        field.name: from_widget(field, widgets[field.name]) for field in echo_fields
    }

    changed = changed_settings(echo_fields, values)

    assert changed == {"audience": "expert", "depth": 4}
    assert encode_settings(changed) == '{"audience":"expert","depth":4}'
    defaults = {field.name: field.default for field in echo_fields}
    assert encode_settings(changed_settings(echo_fields, defaults)) is None


async def test_every_request_carries_the_chat_id_and_changed_settings(
    make_conversation, recorder, thread_id
):
    chat = await make_conversation("echo", settings={"audience": "expert", "depth": 4})

    events = await collect(chat.send("hi"))
    await collect(chat.send("again"))

    answer = "".join(e.text for e in events if isinstance(e, AnswerDelta))
    assert "audience=expert use_history=False depth=4 signature=LGOS " in answer
    assert f"conversation={thread_id}" in answer
    for body in recorder.bodies:
        assert body["metadata"] == {
            "conversation_id": thread_id,
            "lgos_settings": '{"audience":"expert","depth":4}',
        }


async def test_default_settings_are_not_sent(make_conversation, recorder, thread_id):
    chat = await make_conversation("echo", settings={"audience": "general"})

    await collect(chat.send("hi"))

    assert recorder.bodies[-1]["metadata"] == {"conversation_id": thread_id}


async def test_a_graph_without_the_extension_gets_no_settings(make_conversation):
    chat = await make_conversation("echo", settings={"audience": "expert"})
    chat.graph = GraphInfo(model="echo", limited=True)

    options = create_options(chat.graph, chat.state, chat.files, Exchange([], []))

    assert chat.fields == []
    assert options["metadata"] == {"conversation_id": chat.state.thread_id}
    assert "tools" not in options


def test_refs_nullable_unions_numbers_and_objects_are_understood():
    descriptor = {
        "json_schema": {
            "type": "object",
            "$defs": {"Mode": {"enum": ["fast", "slow"], "type": "string"}},
            "properties": {
                "mode": {"$ref": "#/$defs/Mode", "default": "fast"},
                "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "ratio": {"type": "number", "minimum": 0, "maximum": 1},
                "weight": {"type": "number", "title": "Weight (kg)"},
                "level": {"anyOf": [{"const": 1}, {"const": 2}]},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
        },
        "defaults": {"limit": None, "ratio": 0.5, "weight": 1.5, "tags": ["a"]},
    }

    fields = {field.name: field for field in setting_fields(descriptor)}

    assert (fields["mode"].kind, fields["mode"].choices) == ("select", ("fast", "slow"))
    assert fields["mode"].default == "fast"  # the schema default as a fallback
    assert (fields["limit"].kind, fields["limit"].integer) == ("number", True)
    assert (fields["ratio"].kind, fields["ratio"].step) == ("slider", 0.01)
    assert (fields["weight"].kind, fields["weight"].label) == ("number", "Weight (kg)")
    assert (fields["level"].kind, fields["level"].choices) == ("select", (1, 2))
    assert fields["tags"].kind == "json"
    assert from_widget(fields["level"], to_widget(fields["level"], 2)) == 2
    assert from_widget(fields["tags"], '["x", "y"]') == ["x", "y"]
    assert from_widget(fields["limit"], "") is None


@pytest.mark.parametrize(
    ("kind", "raw", "message"),
    [
        ("select", '"other"', "not one of the choices"),
        ("number", "abc", "not a number"),
        ("number", "1.5", "not a whole number"),
        ("number", "inf", "not a finite number"),
        ("json", "{nope", "not valid JSON"),
    ],
)
def test_bad_widget_values_are_explained(kind, raw, message):
    field = SettingField(
        name="x", kind=kind, label="X", default=None, choices=("a",), integer=True
    )

    with pytest.raises(SettingsError, match=message):
        from_widget(field, raw)


def test_settings_longer_than_a_metadata_value_are_refused():
    with pytest.raises(SettingsError, match="allow 512"):
        encode_settings({"text": "x" * 600})


def test_a_bool_is_never_equal_to_a_number_default():
    fields = [SettingField(name="n", kind="number", label="N", default=1)]

    assert changed_settings(fields, {"n": True}) == {"n": True}
    assert changed_settings(fields, {"n": 1.0}) == {}


def test_metadata_omits_what_is_absent():
    assert request_metadata(None, None) == {}
    assert request_metadata("c", '{"a":1}') == {
        "conversation_id": "c",
        "lgos_settings": json.dumps({"a": 1}, separators=(",", ":")),
    }
