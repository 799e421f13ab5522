"""Server tools on Responses: custom tools and web_search run by the graph."""

from __future__ import annotations

from typing import TypedDict

import openai
import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph_openai_serve import GraphConfig
from server_tool_graph import SearchService, build_server_tool_graph, tool_context
from support import assert_golden, normalize_ids, sse_events

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def search():
    service = SearchService()
    yield service
    service.close()


@pytest.fixture
def client(make_client, search):
    def registered(**options):
        return GraphConfig(
            graph=build_server_tool_graph(search.url, **options),
            description="server tools",
            server_tools=["package_version", "web_search"],
            context_factory=tool_context,
        )

    return make_client(
        {
            "tools": registered(),
            "leaky": registered(leak_call=True),
            "search-only": GraphConfig(
                graph=build_server_tool_graph(search.url),
                description="search only",
                server_tools=["web_search"],
                context_factory=tool_context,
            ),
        }
    )


CUSTOM = {"type": "custom", "name": "package_version"}
SEARCH = {"type": "web_search"}


async def _events(client, **body):
    response = await client._client.post(
        "/v1/responses", json={"model": "tools", "stream": True, **body}
    )
    assert response.status_code == 200
    return response.text, sse_events(response.text)


async def test_custom_tool_call_output_and_answer_in_one_response(client):
    response = await client.responses.create(
        model="tools", input="Which version of langgraph?", tools=[CUSTOM]
    )

    call, output, message = response.output
    assert (call.type, call.name, call.input) == (
        "custom_tool_call",
        "package_version",
        "langgraph",
    )
    assert (output.type, output.call_id, output.output) == (
        "custom_tool_call_output",
        call.call_id,
        "langgraph 1.2.3",
    )
    assert message.phase == "final_answer"
    assert response.output_text == "Results: langgraph 1.2.3"


async def test_streamed_custom_tool_matches_golden_transcript(client):
    transcript, events = await _events(client, input="Which version?", tools=[CUSTOM])

    types = [e["type"] for e in events]
    assert types.count("response.custom_tool_call_input.delta") == 1
    assert "Let me check" not in transcript  # the private selection text
    assert "internal_note" not in transcript
    assert_golden("responses_custom_tool.sse", normalize_ids(transcript))


async def test_web_search_streams_its_lifecycle_and_cites_sources(client, search):
    _, events = await _events(client, input="Please search graphs", tools=[SEARCH])

    lifecycle = [
        e["type"] for e in events if e["type"].startswith("response.web_search_call")
    ]
    assert lifecycle == [
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
        "response.web_search_call.completed",
    ]
    final = events[-1]["response"]
    search_item, message = final["output"]
    assert search_item["type"] == "web_search_call"
    assert search_item["status"] == "completed"
    assert search_item["action"] == {"type": "search", "query": "graphs tools"}
    annotations = message["content"][0]["annotations"]
    assert {a["url"] for a in annotations} == {
        "https://docs.example/lgos",
        "https://blog.example/graphs",
    }
    assert "LGOS serves LangGraph graphs" not in str(
        search_item
    )  # results stay private
    assert search.queries[-1] == "graphs tools"
    first_delta = types_index(events, "response.output_text.delta")
    assert first_delta > types_index(events, "response.web_search_call.completed")


def types_index(events, type_):
    return next(i for i, e in enumerate(events) if e["type"] == type_)


async def test_parallel_server_calls_run_in_one_step(client):
    response = await client.responses.create(
        model="tools",
        input="search the version",
        tools=[CUSTOM, SEARCH],
    )

    kinds = [item.type for item in response.output]
    assert kinds == [
        "custom_tool_call",
        "web_search_call",
        "custom_tool_call_output",
        "message",
    ]
    assert "langgraph 1.2.3" in response.output_text


async def test_completed_pairs_replay_without_being_emitted_again(client):
    first = await client.responses.create(
        model="tools", input="search the version", tools=[CUSTOM, SEARCH]
    )
    follow_up = [
        {"role": "user", "content": "search the version"},
        *[item.model_dump(exclude_none=True) for item in first.output],
        {"role": "user", "content": "thanks"},
    ]

    second = await client.responses.create(
        model="tools", input=follow_up, tools=[CUSTOM, SEARCH]
    )

    assert [item.type for item in second.output] == ["message"]


async def test_required_with_only_web_search_forces_a_search(client, search):
    before = len(search.queries)

    response = await client.responses.create(
        model="search-only", input="hello", tools=[SEARCH], tool_choice="required"
    )

    assert response.output[0].type == "web_search_call"
    assert len(search.queries) == before + 1


async def test_unselected_server_tools_are_not_offered(client):
    response = await client.responses.create(model="tools", input="search the version")

    assert [item.type for item in response.output] == ["message"]
    assert response.output_text == "No tools were needed."


async def test_a_selected_call_without_a_result_fails_the_response(client):
    with pytest.raises(openai.InternalServerError):
        await client.responses.create(model="leaky", input="version?", tools=[CUSTOM])
    response = await client._client.post(
        "/v1/responses",
        json={"model": "leaky", "input": "version?", "tools": [CUSTOM], "stream": True},
    )

    events = sse_events(response.text)
    assert [e["type"] for e in events[-2:]] == ["error", "response.failed"]


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"tools": [{**CUSTOM, "description": "mine"}]}, "tools[0].description"),
        ({"tools": [{**CUSTOM, "format": {"type": "text"}}]}, "tools[0].format"),
        ({"tools": [{"type": "custom", "name": "unknown"}]}, "tools[0].name"),
        ({"model": "search-only", "tools": [CUSTOM]}, "tools[0].name"),
        ({"tools": [{"type": "custom", "name": "web_search"}]}, "tools[0].name"),
        (
            {
                "tools": [
                    {"type": "function", "name": "package_version", "parameters": {}}
                ]
            },
            "tools[0].name",
        ),
        (
            {"tools": [SEARCH], "tool_choice": {"type": "web_search"}},
            "tool_choice.type",
        ),
        (
            {
                "tools": [SEARCH],
                "tool_choice": {"type": "custom", "name": "package_version"},
            },
            "tool_choice.name",
        ),
        ({"tools": [CUSTOM, CUSTOM]}, "tools[1]"),
        (
            {"tools": [{"type": "web_search", "search_context_size": "high"}]},
            "tools[0].search_context_size",
        ),
    ],
)
async def test_invalid_server_tool_selections_are_rejected(client, body, param):
    with pytest.raises(openai.BadRequestError) as caught:
        await client.post(
            "/responses", body={"model": "tools", "input": "x", **body}, cast_to=object
        )

    assert caught.value.body["param"] == param


async def test_web_search_is_only_selectable_when_allowlisted(make_client, search):
    client = make_client(
        {
            "custom-only": GraphConfig(
                graph=build_server_tool_graph(search.url),
                description="custom only",
                server_tools=["package_version"],
                context_factory=tool_context,
            )
        }
    )

    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="custom-only", input="x", tools=[SEARCH])

    assert caught.value.body["param"] == "tools[0].type"


async def test_chat_completions_cannot_select_server_tools(client):
    with pytest.raises(openai.BadRequestError) as named:
        await client.chat.completions.create(
            model="tools",
            messages=[{"role": "user", "content": "x"}],
            tools=[{"type": "function", "function": {"name": "package_version"}}],
        )
    with pytest.raises(openai.BadRequestError) as custom:
        await client.post(
            "/chat/completions",
            body={
                "model": "tools",
                "messages": [{"role": "user", "content": "x"}],
                "tools": [CUSTOM],
            },
            cast_to=object,
        )

    assert named.value.body["param"] == "tools[0].function.name"
    assert custom.value.body["param"] == "tools[0].type"


def _two_step_graph(second_call_id: str):
    """Emits a selected custom call and its result, then another call."""

    def call(call_id):
        return AIMessage(
            content="",
            tool_calls=[
                {"id": call_id, "name": "package_version", "args": {"__arg1": "x"}}
            ],
        )

    async def first(state: MessagesState):
        return {"messages": [call("call_1"), ToolMessage("x 1", tool_call_id="call_1")]}

    async def second(state: MessagesState):
        return {
            "messages": [
                call(second_call_id),
                ToolMessage("x 2", tool_call_id=second_call_id),
                AIMessage(content="done"),
            ]
        }

    builder = StateGraph(MessagesState)
    builder.add_node("first", first)
    builder.add_node("second", second)
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    builder.add_edge("second", END)
    return builder.compile()


async def test_a_public_call_id_emitted_twice_fails_the_response(make_client):
    graphs = {
        name: GraphConfig(
            graph=_two_step_graph(second),
            description="d",
            server_tools=["package_version"],
        )
        for name, second in (("distinct", "call_2"), ("repeated", "call_1"))
    }
    client = make_client(graphs)

    ok = await client.responses.create(model="distinct", input="x", tools=[CUSTOM])
    with pytest.raises(openai.InternalServerError):
        await client.responses.create(model="repeated", input="x", tools=[CUSTOM])

    assert [item.call_id for item in ok.output if item.type == "custom_tool_call"] == [
        "call_1",
        "call_2",
    ]


def _subgraph_search_graph():
    """A subgraph searches with its own private state; only a summary returns."""

    class Private(TypedDict):
        messages: list
        summary: str

    async def search(state: Private):
        call = AIMessage(
            content="",
            tool_calls=[
                {"id": "ws_private", "name": "web_search", "args": {"query": "q"}}
            ],
        )
        return {
            "messages": [call, ToolMessage("hits", tool_call_id="ws_private")],
            "summary": "found",
        }

    inner = StateGraph(Private)
    inner.add_node("search", search)
    inner.add_edge(START, "search")
    inner.add_edge("search", END)
    research = inner.compile()

    async def delegate(state: MessagesState):
        result = await research.ainvoke({"messages": [], "summary": ""})
        return {"messages": [AIMessage(content=f"Summary: {result['summary']}")]}

    outer = StateGraph(MessagesState)
    outer.add_node("delegate", delegate)
    outer.add_edge(START, "delegate")
    outer.add_edge("delegate", END)
    return outer.compile()


async def test_nested_subgraph_activity_stays_private(make_client):
    client = make_client(
        {
            "nested": GraphConfig(
                graph=_subgraph_search_graph(),
                description="d",
                server_tools=["web_search"],
            )
        }
    )

    response = await client.responses.create(model="nested", input="x", tools=[SEARCH])

    assert [item.type for item in response.output] == ["message"]
    assert response.output_text == "Summary: found"
