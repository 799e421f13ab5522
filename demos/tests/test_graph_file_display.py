"""``file-display``: the display_file round trip through the Files API."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from demo_support import answer_text, commentary, drain
from langgraph_openai_serve import ClientFunctionTool
from lgos_demos.graphs.file_display import display_arguments

CSV = b"month,visitors,revenue\nJan,120,10.5\nFeb,340,22\nMar,95,17.25\n"
DISPLAY_FILE = {
    "type": "function",
    "name": "display_file",
    "description": "Show a file from the Files API to the user.",
    "parameters": {
        "type": "object",
        "properties": {"file_id": {"type": "string"}, "title": {"type": "string"}},
        "required": ["file_id", "title"],
        "additionalProperties": False,
    },
    "strict": True,
}
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def uploaded(files):
    return files.files.create(file=("sales.csv", CSV, "text/csv"), purpose="user_data")


def _ask(file_id: str, text: str = "Chart the revenue") -> dict:
    return {
        "role": "user",
        "content": [
            {"type": "input_text", "text": text},
            {"type": "input_file", "file_id": file_id},
        ],
    }


def test_chart_is_uploaded_shown_with_display_file_and_acknowledged(
    api, files, uploaded
):
    question = _ask(uploaded.id)

    events, first = drain(
        api.responses.create(
            model="file-display", input=[question], tools=[DISPLAY_FILE], stream=True
        )
    )
    (call,) = [item for item in first.output if item.type == "function_call"]
    arguments = json.loads(call.arguments)
    chart = files.files.content(arguments["file_id"]).read()
    second = api.responses.create(
        model="file-display",
        input=[
            question,
            *[item.model_dump() for item in first.output],
            {
                "type": "function_call_output",
                "call_id": call.call_id,
                "output": "shown",
            },
        ],
        tools=[DISPLAY_FILE],
    )

    assert call.name == "display_file"
    assert set(arguments) == {"file_id", "title"}  # exactly the strict schema
    assert arguments["title"] == "revenue by month"
    assert files.files.retrieve(arguments["file_id"]).filename == "sales-chart.svg"
    svg = ET.fromstring(chart)
    assert svg.tag == f"{SVG}svg"
    assert len(svg.findall(f"{SVG}rect")) == 1 + 3  # background + one bar per row
    labels = {t.text for t in svg.iter(f"{SVG}text")}
    assert {"Jan", "Feb", "Mar", "17.25"} <= labels
    assert "response.function_call_arguments.done" in {e.type for e in events}
    assert commentary(first)[0] == "Reading the attached file"
    assert answer_text(first) == ""
    assert second.output_text == "display_file returned: shown."
    assert [i.type for i in second.output] == ["message"]


def test_without_display_file_the_graph_names_the_chart_in_text(api, uploaded):
    response = api.responses.create(model="file-display", input=[_ask(uploaded.id)])

    text = response.output[-1].content[0].text
    assert "uploaded it as file-" in text
    assert "no display_file function" in text


def test_a_file_that_is_not_a_table_is_explained(api, files):
    bad = files.files.create(
        file=("notes.txt", b"just words\n", "text/plain"), purpose="user_data"
    )

    response = api.responses.create(
        model="file-display", input=[_ask(bad.id)], tools=[DISPLAY_FILE]
    )

    assert response.output[-1].content[0].text.startswith("I could not chart that file")
    assert all(item.type == "message" for item in response.output)


def test_chat_completions_file_parts_reach_the_graph(api, uploaded):
    reply = api.chat.completions.create(
        model="file-display",
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Chart visitors"},
                    {"type": "file", "file": {"file_id": uploaded.id}},
                ],
            }
        ],
        tools=[
            {
                "type": "function",
                "function": {
                    "name": "display_file",
                    "parameters": {
                        "type": "object",
                        "properties": {"file_id": {"type": "string"}},
                        "required": ["file_id"],
                    },
                },
            }
        ],
    )

    (call,) = reply.choices[0].message.tool_calls
    assert call.function.name == "display_file"
    assert json.loads(call.function.arguments)["file_id"].startswith("file-")
    assert reply.choices[0].finish_reason == "tool_calls"


def test_display_arguments_follow_the_offered_schema():
    offered = ClientFunctionTool(
        name="display_file",
        parameters={
            "type": "object",
            "properties": {
                "file_id": {"type": "string"},
                "filename": {"type": "string"},
                "mime_type": {"type": "string"},
                "caption": {"type": "string"},
                "layout": {"type": "string"},
                "extra": {"type": "string"},
            },
            "required": ["file_id", "layout"],
        },
        strict=True,
    )

    arguments = display_arguments(
        offered, file_id="file-1", filename="a.svg", title="T"
    )

    assert arguments == {
        "file_id": "file-1",
        "filename": "a.svg",
        "mime_type": "image/svg+xml",
        "caption": "T",
        "layout": "",
    }
    bare = ClientFunctionTool(name="display_file")
    assert display_arguments(bare, file_id="f", filename="n", title="t") == {
        "file_id": "f"
    }
