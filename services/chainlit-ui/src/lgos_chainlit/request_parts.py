"""What one request of a chat sends, and what its answer commits.

An ``Exchange`` is one request: its input and the items that enter the
ledger with its output. ``next_exchange`` builds a user turn's (or a client
call round's): on a deployment that keeps Responses only what the chained
Response does not cover, naming it; otherwise the whole ledger.
``create_options`` is the rest of the request: the graph, the chat's
metadata and changed settings, its selected server tools.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lgos_chainlit.catalog import GraphInfo
from lgos_chainlit.chats import ChatState
from lgos_chainlit.files import DISPLAY_FILE, DISPLAY_FILE_TOOL, FilesClient
from lgos_chainlit.interrupts import PendingInterrupt
from lgos_chainlit.ledger import Item, Ledger
from lgos_chainlit.runtime_settings import (
    SettingField,
    changed_settings,
    encode_settings,
    request_metadata,
    setting_fields,
)


@dataclass
class Exchange:
    """One request: what to send and what to commit with its output."""

    input: list[Item]
    commit_first: list[Item]
    previous_response_id: str | None = None
    resuming: PendingInterrupt | None = None
    replay: list[Item] | None = None
    """A chained request's whole-ledger input, sent instead when the server
    no longer has the Response it names."""

    def unchain(self) -> None:
        """Send the whole ledger instead of naming the chained Response."""
        assert self.replay is not None
        self.input, self.replay = self.replay, None
        self.previous_response_id = None


def next_exchange(
    ledger: Ledger, state: ChatState, graph: GraphInfo, turn: list[Item]
) -> Exchange:
    """The next request for ``turn`` (committed with its output)."""
    whole = ledger.request_input(turn)
    chain = state.chain
    if not graph.stores_responses or chain is None:
        return Exchange(input=whole, commit_first=turn)
    return Exchange(
        input=whole[chain.covered :],
        commit_first=turn,
        previous_response_id=chain.response_id,
        replay=whole,
    )


def graph_settings(graph: GraphInfo) -> list[SettingField]:
    """The graph's runtime settings (none when the extension is missing)."""
    return [] if graph.limited else setting_fields(graph.client_settings)


def request_tools(
    graph: GraphInfo, state: ChatState, files: FilesClient | None
) -> list[Item]:
    """Selected server tools, plus ``display_file`` when the graph calls it."""
    tools: list[Item] = []
    for name in state.tools:
        if name in graph.server_tools:
            tools.append(
                {"type": "web_search"}
                if name == "web_search"
                else {"type": "custom", "name": name}
            )
    if graph.offers_client_tool(DISPLAY_FILE) and files is not None:
        tools.append(dict(DISPLAY_FILE_TOOL))
    return tools


def create_options(
    graph: GraphInfo,
    state: ChatState,
    files: FilesClient | None,
    exchange: Exchange,
) -> dict[str, Any]:
    """``responses.create``'s arguments for ``exchange`` (without how the
    answer comes back: streamed or in the background)."""
    changed = changed_settings(graph_settings(graph), state.settings)
    options: dict[str, Any] = {
        "model": graph.model,
        "input": exchange.input,
        # ``conversation_id`` plus the changed settings, on every request.
        "metadata": request_metadata(state.thread_id, encode_settings(changed)),
        # A deployment that keeps Responses keeps these too, so the next
        # turn can name them instead of replaying the ledger.
        "store": graph.stores_responses,
    }
    tools = request_tools(graph, state, files)
    if tools:
        options["tools"] = tools
    if exchange.previous_response_id is not None:
        options["previous_response_id"] = exchange.previous_response_id
    return options
