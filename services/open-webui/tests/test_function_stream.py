"""The Function against the demo graphs through a real LiteLLM: Responses
streams in, Open WebUI events and answer text out."""

from __future__ import annotations

import asyncio
import contextlib
import json

import pytest
from lgos_testkit import no_async_generator_left
from owui_support import FUNCTION_FILE, chat, user

pytestmark = pytest.mark.anyio

QUESTION = "How do I upload files to the Files API?"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_the_function_file_survives_open_webuis_import_rewriting():
    # Open WebUI rewrites these prefixes in a Function's source (plugin.py
    # replace_imports) and reads the leading docstring as frontmatter.
    source = FUNCTION_FILE.read_text()
    for prefix in ("from utils", "from apps", "from main", "from config"):
        assert prefix not in source
    assert source.startswith('"""\ntitle: LGOS Responses\n')


async def test_pipes_lists_every_lgos_graph_of_the_gateway(pipe):
    models = await pipe.pipes()

    assert {m["id"] for m in models} == {
        "lgos/simple",
        "lgos/citations",
        "lgos/interrupts",
        "lgos/file-display",
        "lgos/server-tools",
        "lgos/approvals",
        "lgos/background",
    }


async def test_the_models_valve_narrows_the_list(pipe):
    pipe.valves.models = "lgos/simple, lgos/interrupts"

    assert [m["id"] for m in await pipe.pipes()] == ["lgos/interrupts", "lgos/simple"]


async def test_an_unreachable_gateway_is_shown_as_an_unavailable_model(pipe):
    pipe.valves.gateway_url = "http://127.0.0.1:9/v1"

    (model,) = await pipe.pipes()

    assert model["id"] == "unavailable"
    assert "127.0.0.1:9/model/info" in model["name"]


async def test_commentary_becomes_status_and_citations_become_sources(pipe, recorder):
    text = await chat(pipe, recorder, "lgos/citations", [user(QUESTION)])

    statuses = recorder.of_type("status")
    assert statuses[0] == {
        "description": f"Searching the docs for “{QUESTION}”",
        "done": False,
    }
    assert statuses[-1]["done"] is True
    assert statuses[-1]["description"].startswith("Found ")
    sources = recorder.of_type("source")
    assert sources, text
    assert all(s["source"]["url"].startswith("http://127.0.0.1:") for s in sources)
    assert len({s["source"]["url"] for s in sources}) == len(sources)
    assert sources[0]["document"][0].endswith("[1]")  # the cited span
    assert "[1]" in text
    assert "Searching the docs" not in text  # commentary is not answer text


async def test_user_valve_settings_reach_the_graph_as_lgos_settings(
    pipe, function_module, recorder
):
    valves = function_module.Pipe.UserValves(
        settings=json.dumps(
            {"lgos/simple": {"audience": "expert", "use_history": False}}
        )
    )
    messages = [
        user("My name is Ada."),
        {"role": "assistant", "content": "Hello Ada."},
        user("What is LGOS?"),
    ]

    text = await chat(
        pipe, recorder, "lgos/simple", messages, __user__={"valves": valves}
    )

    assert "expert audience" in text
    assert "Ada" not in text


async def test_history_is_replayed_when_no_settings_change_it(pipe, recorder):
    messages = [
        user("My name is Ada."),
        {"role": "assistant", "content": "Hello Ada."},
        user("What is LGOS?"),
    ]

    text = await chat(pipe, recorder, "lgos/simple", messages)

    assert "general audience" in text
    assert "My name is Ada." in text


async def test_invalid_settings_are_explained_in_the_chat(
    pipe, function_module, recorder
):
    valves = function_module.Pipe.UserValves(
        settings=json.dumps({"lgos/simple": {"audience": "robots"}})
    )

    text = await chat(
        pipe, recorder, "lgos/simple", [user("Hi")], __user__={"valves": valves}
    )

    assert text.startswith("\n\n> **LGOS:** HTTP 400")
    assert "audience" in text


async def test_title_and_tag_tasks_never_run_a_graph(pipe, recorder):
    text = await chat(
        pipe, recorder, "lgos/citations", [user(QUESTION)], __task__="title_generation"
    )

    assert text == ""
    assert recorder.events == []


TOOLS_QUESTION = (
    "Which version of langgraph is installed? Also search for server tools."
)


async def test_advertised_server_tools_are_selected_and_run(pipe, recorder):
    text = await chat(pipe, recorder, "lgos/server-tools", [user(TOOLS_QUESTION)])

    statuses = recorder.statuses()
    assert "Looking up the installed version of langgraph" in statuses
    assert "Searching the web for “server tools”" in statuses
    assert "package_version returned: langgraph" in text
    assert recorder.of_type("source")  # the search results are cited


async def test_the_server_tools_valve_narrows_the_selection(
    pipe, function_module, recorder
):
    valves = function_module.Pipe.UserValves(
        server_tools=json.dumps({"lgos/server-tools": ["package_version"]})
    )

    await chat(
        pipe,
        recorder,
        "lgos/server-tools",
        [user(TOOLS_QUESTION)],
        __user__={"valves": valves},
    )

    statuses = recorder.statuses()
    assert "Looking up the installed version of langgraph" in statuses
    assert not any(s.startswith("Searching the web") for s in statuses)


async def test_a_finished_turn_leaves_no_stream_open(pipe, recorder, function_module):
    with no_async_generator_left({function_module.__name__}):
        text = await chat(pipe, recorder, "lgos/citations", [user(QUESTION)])

    assert text


async def test_a_turn_cancelled_mid_answer_leaves_no_stream_open(
    pipe, recorder, function_module
):
    answering = asyncio.Event()
    body = {
        "model": "lgos_responses.lgos/citations",
        "messages": [user(QUESTION)],
        "stream": True,
    }

    async def read() -> None:
        async for _ in pipe.pipe(
            body, __event_emitter__=recorder.emit, __event_call__=recorder.call
        ):
            answering.set()

    with no_async_generator_left({function_module.__name__}):
        reader = asyncio.create_task(read())
        await answering.wait()
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
