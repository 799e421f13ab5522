"""The first screen: which graph a new chat starts on, with which server
tools (all of the graph's, switched on), and what each graph offers.

Chainlit shows the chosen chat profile's icon and Markdown description on an
empty chat, with the profile's starters (prompts sent with one click) under
the message box. This module writes that text from the catalog: the graph's
own description, what to try with it, and the other graphs by name. The demo
graphs come with suggested prompts and hints (``DEMO_GUIDES``, matched by the
model name's last path segment, so ``lgos/citations`` and ``citations`` both
match); other graphs show their description alone. No Chainlit import.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lgos_chainlit.catalog import LIMITED_NOTICE, GraphInfo
from lgos_chainlit.chats import ChatState


@dataclass(frozen=True, slots=True)
class GraphGuide:
    """What to try with one graph: prompts to send and a hint."""

    prompts: tuple[str, ...] = ()
    hint: str = ""


DEMO_GUIDES: dict[str, GraphGuide] = {
    "citations": GraphGuide(
        prompts=("How are files stored?", "How are background runs cancelled?"),
        hint="Its progress shows above the answer; the answer links its sources.",
    ),
    "simple": GraphGuide(
        prompts=("What does a checkpoint hold?", "Explain leases"),
        hint="Change the audience in the settings (the button next to the "
        "message box) and ask again.",
    ),
    "web-search": GraphGuide(
        prompts=("Search the web for how background runs are cancelled",),
        hint="Its web_search tool is switched on; the settings switch it off.",
    ),
    "server-tools": GraphGuide(
        prompts=("Which version of langgraph is installed?",),
        hint="Its tools (package_version, web_search) are switched on; the "
        "settings switch them off.",
    ),
    "file-display": GraphGuide(
        hint="Attach a CSV file with the paperclip and ask for a chart of it.",
    ),
    "router": GraphGuide(prompts=("How are files stored?",)),
    "structured": GraphGuide(
        prompts=("Tell me about LGOS.",),
        hint="Its options (temperature, a JSON schema) come from API clients; "
        "here it answers as plain text.",
    ),
    "interrupts": GraphGuide(
        prompts=("Refund order 4201, it arrived broken",),
        hint="It stops to ask whether to approve the refund: answer with the buttons.",
    ),
    "background": GraphGuide(
        prompts=("Prepare the monthly report",),
        hint="Switch on “Run in background” in the settings to queue the job, "
        "follow it here and cancel it.",
    ),
}


def short_name(model: str) -> str:
    """The model name's last path segment (``lgos/citations`` -> ``citations``)."""
    return model.rsplit("/", 1)[-1]


def guide(graph: GraphInfo) -> GraphGuide:
    return DEMO_GUIDES.get(short_name(graph.model), GraphGuide())


def default_graph(graphs: Sequence[GraphInfo], preferred: str) -> GraphInfo | None:
    """The graph a new chat starts on: ``preferred`` (a model name or its last
    segment) when listed, else the first one."""
    for graph in graphs:
        if preferred in (graph.model, short_name(graph.model)):
            return graph
    return graphs[0] if graphs else None


def new_chat(thread_id: str, graph: GraphInfo) -> ChatState:
    """A new chat's state: the graph's server tools start switched on (a
    graph lists them to be used; the settings switch them off)."""
    tools = [] if graph.limited else list(graph.server_tools)
    return ChatState(thread_id=thread_id, model=graph.model, tools=tools)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def profile_markdown(graph: GraphInfo, graphs: Sequence[GraphInfo]) -> str:
    """The welcome text of ``graph``'s chat profile."""
    description = LIMITED_NOTICE if graph.limited else graph.description
    lines = [f"### {graph.model}", _one_line(description or "A LangGraph graph.")]
    hint = guide(graph).hint
    if hint:
        lines.append(f"**Try it:** {hint}")
    others = [other.model for other in graphs if other.model != graph.model]
    if others:
        named = ", ".join(f"**{model}**" for model in others)
        lines.append(
            f"Other graphs: {named}. Pick one in the selector at the top "
            "(it shows what each one does)."
        )
    return "\n\n".join(lines)
