"""``citations``: retrieve from the docs, answer with ``url_citation``s.

Demonstrates citations and status commentary: a retrieve step searches the
corpus (publishing ``status_event``s), the model answers from numbered
sources with ``[n]`` markers, and each marker becomes a LangChain citation
with exactly the URL the search returned — on Responses an
``output_text.annotations`` ``url_citation``, on Chat ``message.annotations``.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.pregel import Pregel

from lgos_demos.graphs.answering import answer_from_sources, last_user_text, retrieve
from lgos_demos.search_client import SearchClient
from lgos_demos.sources import Source


class CitationsState(MessagesState):
    sources: list[Source]


def build_citations_graph(
    model: BaseChatModel, search: SearchClient
) -> Pregel[Any, Any, Any, Any]:
    async def search_docs(state: CitationsState) -> dict[str, Any]:
        return {"sources": await retrieve(search, last_user_text(state["messages"]))}

    async def answer(state: CitationsState) -> dict[str, list[BaseMessage]]:
        sources = state.get("sources", [])
        return {
            "messages": [await answer_from_sources(model, state["messages"], sources)]
        }

    builder = StateGraph(CitationsState)
    builder.add_node("retrieve", search_docs)
    builder.add_node("answer", answer)
    builder.add_edge(START, "retrieve")
    builder.add_edge("retrieve", "answer")
    builder.add_edge("answer", END)
    return builder.compile(name="citations")
