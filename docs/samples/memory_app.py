from langchain_core.messages import BaseMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph_openai_serve import (
    GraphConfig,
    GraphRegistry,
    LanggraphOpenaiServe,
    Settings,
)
from langgraph_openai_serve.testing import ScriptedChatModel


def recall(messages: list[BaseMessage]) -> str:
    """Stands in for an LLM: answers from every user message it was given."""
    said = [m.text for m in messages if m.type == "human"]
    return f"You told me {len(said)} things: " + "; ".join(said)


async def chat(state: MessagesState) -> dict[str, list[BaseMessage]]:
    model = ScriptedChatModel(responder=recall)
    return {"messages": [await model.ainvoke(state["messages"])]}


graph = StateGraph(MessagesState).add_node(chat).add_edge(START, "chat").compile()

# LGOS_RESPONSE_STORE=memory in the environment does the same; use
# "postgres" (with LGOS_DATABASE_URL) to keep Responses across restarts.
app = (
    LanggraphOpenaiServe(
        graphs=GraphRegistry(
            registry={"recall": GraphConfig(graph=graph, description="Remembers.")}
        ),
        settings=Settings(RESPONSE_STORE="memory"),
    )
    .bind_openai_api()
    .app
)
