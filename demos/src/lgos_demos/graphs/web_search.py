"""``web-search``: the ``web_search`` server tool alone.

With ``tools=[{"type": "web_search"}]`` the model decides whether to search;
``tool_choice="required"`` forces it. Results become a ``web_search_call``
item and ``url_citation`` annotations on the answer.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.pregel import Pregel

from lgos_demos.graphs.tool_agent import build_tool_agent
from lgos_demos.graphs.tools import WEB_SEARCH, web_search_tool
from lgos_demos.search_client import SearchClient

SERVER_TOOLS = (WEB_SEARCH,)


def build_web_search_graph(
    model: BaseChatModel, search: SearchClient
) -> Pregel[Any, Any, Any, Any]:
    return build_tool_agent(
        model, {WEB_SEARCH: web_search_tool(search)}, name="web-search"
    )
