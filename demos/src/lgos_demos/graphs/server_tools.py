"""``server-tools``: a custom ``package_version`` tool and ``web_search``,
both executed by the graph.

Clients select them per request (``tools=[{"type": "custom", "name":
"package_version"}, {"type": "web_search"}]``); the response carries the
calls, their outputs and the cited answer in one Response.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.pregel import Pregel

from lgos_demos.graphs.tool_agent import build_tool_agent
from lgos_demos.graphs.tools import (
    PACKAGE_VERSION,
    WEB_SEARCH,
    package_version_tool,
    web_search_tool,
)
from lgos_demos.search_client import SearchClient

SERVER_TOOLS = (PACKAGE_VERSION, WEB_SEARCH)


def build_server_tools_graph(
    model: BaseChatModel, search: SearchClient
) -> Pregel[Any, Any, Any, Any]:
    tools = {
        PACKAGE_VERSION: package_version_tool(),
        WEB_SEARCH: web_search_tool(search),
    }
    return build_tool_agent(model, tools, name="server-tools")
