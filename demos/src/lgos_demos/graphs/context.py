"""The per-request runtime context of the graphs that use tools.

``request_context`` is the ``GraphConfig.context_factory``: it hands the graph
what the client selected and offered, from the protocol-neutral request, and
the tenant it runs for (what the graph reads and writes on the caller's
behalf is that tenant's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langgraph_openai_serve import ClientFunctionTool, ClientSettings, GraphRequest


@dataclass(frozen=True, slots=True)
class RequestContext:
    """Selected server tools, the tool choice, the client's functions and the
    caller's tenant."""

    server_tools: tuple[str, ...] = ()
    tool_choice: Any = None
    client_tools: tuple[ClientFunctionTool, ...] = ()
    scope: str | None = None
    """The tenant the request runs for, as LGOS trusts it (``GraphRequest.scope``)."""

    def client_tool(self, name: str) -> ClientFunctionTool | None:
        """The client function ``name``, if the client offered it."""
        return next((tool for tool in self.client_tools if tool.name == name), None)


def request_context(
    request: GraphRequest, settings: ClientSettings | None
) -> RequestContext:
    return RequestContext(
        server_tools=request.server_tools,
        tool_choice=request.tool_choice,
        client_tools=request.tools,
        scope=request.scope,
    )
