"""``file-display``: chart an uploaded CSV and ask the client to show it.

Demonstrates file inputs and client tools. The client uploads a CSV to the
Files API and sends its ``file_id`` (``input_file``); the graph downloads it,
draws an SVG bar chart, uploads the chart and calls the client function
``display_file`` with the new ``file_id``. The client downloads and shows the
chart, then replays the call with its ``function_call_output``; on that turn
the graph answers briefly. Both files are the caller's: the graph reads and
writes them for the tenant its request runs for, so a file id of another
tenant is not found.

``display_file``'s arguments follow the schema the client offered: the graph
fills ``file_id`` and, when declared, ``filename``, ``mime_type`` (or
``content_type``) and ``title`` (or ``caption``/``description``/``alt``).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.pregel import Pregel
from langgraph.runtime import Runtime
from langgraph_openai_serve import ClientFunctionTool, status_event

from lgos_demos.charts import ChartError, bar_chart, read_series
from lgos_demos.files_client import FilesClient, FilesError
from lgos_demos.graphs.answering import last_user_text
from lgos_demos.graphs.context import RequestContext

DISPLAY_FILE = "display_file"
CHART_TYPE = "image/svg+xml"
MAX_INPUT_BYTES = 5 * 1024 * 1024
INSTRUCTION = (
    "You help people chart CSV files: they attach a CSV and you draw a bar "
    "chart of it. Answer in one or two sentences."
)
_TITLE_FIELDS = ("title", "caption", "description", "alt", "alt_text")


def latest_file_id(messages: Sequence[BaseMessage]) -> str | None:
    """The last ``file_id`` attached to the latest user message."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            blocks = message.content if isinstance(message.content, list) else []
            ids = [
                b["file_id"]
                for b in blocks
                if isinstance(b, dict) and b.get("type") == "file" and b.get("file_id")
            ]
            return ids[-1] if ids else None
    return None


def without_files(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """``messages`` with file blocks as text: the model's provider cannot read
    our Files API's ids."""
    cleaned: list[BaseMessage] = []
    for message in messages:
        if isinstance(message, HumanMessage) and isinstance(message.content, list):
            parts: list[str | dict[str, Any]] = [
                {"type": "text", "text": f"(attached file {b.get('file_id')})"}
                if isinstance(b, dict) and b.get("type") == "file"
                else b
                for b in message.content
            ]
            message = message.model_copy(update={"content": parts})
        cleaned.append(message)
    return cleaned


def display_arguments(
    offered: ClientFunctionTool, *, file_id: str, filename: str, title: str
) -> dict[str, Any]:
    """Arguments matching the client's ``display_file`` schema exactly."""
    parameters = offered.parameters or {}
    properties = parameters.get("properties")
    if not isinstance(properties, dict) or not properties:
        return {"file_id": file_id}
    required = parameters.get("required")
    known = {
        "file_id": file_id,
        "filename": filename,
        "mime_type": CHART_TYPE,
        "content_type": CHART_TYPE,
        **dict.fromkeys(_TITLE_FIELDS, title),
    }
    arguments: dict[str, Any] = {}
    for name in properties:
        if name in known:
            arguments[name] = known[name]
        elif isinstance(required, list) and name in required:
            arguments[name] = ""
    return arguments


def build_file_display_graph(
    model: BaseChatModel, files: FilesClient | None
) -> Pregel[Any, Any, Any, Any]:
    """The graph; without ``files`` (no Files API key) it says it cannot
    read files."""

    async def chart(
        state: MessagesState, runtime: Runtime[RequestContext]
    ) -> dict[str, list[BaseMessage]]:
        file_id = latest_file_id(state["messages"]) or ""
        owner = runtime.context.scope if runtime.context else None
        write = get_stream_writer()
        try:
            write(status_event("Reading the attached file"))
            if files is None:
                raise FilesError("no Files API key is configured (DEMO_FILES_API_KEY)")
            stored = await files.retrieve(file_id, owner=owner)
            data = await files.content(file_id, owner=owner, max_bytes=MAX_INPUT_BYTES)
            series = read_series(data, hint=last_user_text(state["messages"]))
            title = f"{series.value_name} by {series.label_name}"
            write(
                status_event(f"Drawing a bar chart of {title} from {stored.filename}")
            )
            name = f"{PurePath(stored.filename).stem or 'data'}-chart.svg"
            svg = bar_chart(series, title).encode()
            uploaded = await files.upload(name, svg, CHART_TYPE, owner=owner)
            write(status_event("Chart uploaded", done=True))
        except (FilesError, ChartError) as exc:
            write(status_event("Could not chart the file", done=True))
            return {
                "messages": [AIMessage(content=f"I could not chart that file: {exc}.")]
            }
        offered = runtime.context.client_tool(DISPLAY_FILE) if runtime.context else None
        if offered is None:
            text = (
                f"I drew a bar chart of {title} and uploaded it as {uploaded.id} "
                f"({name}), but this client offers no {DISPLAY_FILE} function "
                "to show it."
            )
            return {"messages": [AIMessage(content=text)]}
        call = {
            "id": f"call_{uuid.uuid4().hex}",
            "name": DISPLAY_FILE,
            "args": display_arguments(
                offered, file_id=uploaded.id, filename=name, title=title
            ),
        }
        return {"messages": [AIMessage(content="", tool_calls=[call])]}

    async def answer(state: MessagesState) -> dict[str, list[BaseMessage]]:
        prompt = SystemMessage(content=INSTRUCTION)
        reply = await model.ainvoke([prompt, *without_files(state["messages"])])
        return {"messages": [reply]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1] if state["messages"] else None
        if isinstance(last, HumanMessage) and latest_file_id(state["messages"]):
            return "chart"
        return "answer"

    builder = StateGraph(MessagesState, context_schema=RequestContext)
    builder.add_node("chart", chart)
    builder.add_node("answer", answer)
    builder.add_conditional_edges(START, route, ["chart", "answer"])
    builder.add_edge("chart", END)
    builder.add_edge("answer", END)
    return builder.compile(name="file-display")
