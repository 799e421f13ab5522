"""Server tools: selected per request, run by the graph, reported as typed items."""

from __future__ import annotations

import openai
import pytest
import tools_client
from conftest import expected_output

SEARCH = {"type": "web_search"}


def test_selected_server_tools_run_inside_the_response(serve, capsys):
    server = serve("tools_app")

    tools_client.main(server.base_url)

    assert capsys.readouterr().out == expected_output("tools_client.out")


def test_streams_announce_searches_and_custom_inputs(serve):
    client = serve("tools_app").client()

    stream = client.responses.create(
        model="assistant",
        input="What is LangGraph?",
        tools=[SEARCH, {"type": "custom", "name": "word_count"}],
        stream=True,
    )
    types = {event.type for event in stream}

    assert "response.web_search_call.completed" in types
    assert "response.custom_tool_call_input.delta" in types


def test_unregistered_custom_tools_are_refused(serve):
    client = serve("tools_app").client()

    with pytest.raises(openai.BadRequestError):
        client.responses.create(
            model="assistant",
            input="Hi",
            tools=[{"type": "custom", "name": "delete_everything"}],
        )


def test_chat_completions_cannot_select_server_tools(serve):
    client = serve("tools_app").client()

    reply = client.chat.completions.create(
        model="assistant", messages=[{"role": "user", "content": "Hi"}]
    )

    assert reply.choices[0].message.content == "No tool was selected."
