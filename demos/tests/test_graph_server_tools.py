"""``server-tools``: the graph executes ``package_version`` and ``web_search``."""

from __future__ import annotations

from importlib import metadata

from demo_support import answer_text, commentary, deltas, drain

TOOLS = [{"type": "custom", "name": "package_version"}, {"type": "web_search"}]
QUESTION = "Which version of langgraph is installed? Also search for server tools."


def test_one_response_carries_calls_outputs_and_a_cited_answer(api):
    response = api.responses.create(model="server-tools", input=QUESTION, tools=TOOLS)

    kinds = [item.type for item in response.output if item.type != "message"]
    assert sorted(kinds) == [
        "custom_tool_call",
        "custom_tool_call_output",
        "web_search_call",
    ]
    call = next(i for i in response.output if i.type == "custom_tool_call")
    output = next(i for i in response.output if i.type == "custom_tool_call_output")
    search = next(i for i in response.output if i.type == "web_search_call")
    assert (call.name, call.input) == ("package_version", "langgraph")
    assert output.call_id == call.call_id
    assert output.output == f"langgraph {metadata.version('langgraph')} is installed."
    assert search.status == "completed"
    final = response.output[-1]
    assert final.phase == "final_answer"
    assert "package_version returned: langgraph" in final.content[0].text
    assert final.content[0].annotations


def test_streaming_emits_tool_events_and_only_the_answer_as_text(api):
    events, final = drain(
        api.responses.create(
            model="server-tools", input=QUESTION, tools=TOOLS, stream=True
        )
    )

    types = {e.type for e in events}
    assert "response.custom_tool_call_input.done" in types
    assert "response.web_search_call.completed" in types
    assert deltas(events, final) == answer_text(final)
    statuses = commentary(final)
    assert "Looking up the installed version of langgraph" in statuses
    assert "Searching the web for “server tools”" in statuses


def test_replayed_tool_items_continue_the_conversation(api):
    first = api.responses.create(model="server-tools", input=QUESTION, tools=TOOLS)
    follow_up = [
        {"role": "user", "content": QUESTION},
        *[item.model_dump() for item in first.output],
        {"role": "user", "content": "Thanks, and which version of openai?"},
    ]

    second = api.responses.create(model="server-tools", input=follow_up, tools=TOOLS)

    outputs = [i for i in second.output if i.type == "custom_tool_call_output"]
    assert [o.output for o in outputs] == [
        f"openai {metadata.version('openai')} is installed."
    ]


def test_chat_completions_answer_without_server_tools(api):
    reply = api.chat.completions.create(
        model="server-tools", messages=[{"role": "user", "content": QUESTION}]
    )

    assert reply.choices[0].message.content.startswith("You said:")
    assert reply.choices[0].message.tool_calls is None


def test_a_named_custom_tool_choice_forces_that_tool(api):
    response = api.responses.create(
        model="server-tools",
        input="Tell me about httpx",
        tools=TOOLS,
        tool_choice={"type": "custom", "name": "package_version"},
    )

    (call,) = [i for i in response.output if i.type == "custom_tool_call"]
    assert (call.name, call.input) == ("package_version", "httpx")
    assert not [i for i in response.output if i.type == "web_search_call"]
