from typing import Any

from fastapi import FastAPI
from langchain_core.messages import AIMessage
from langchain_core.messages.content import create_citation, create_text_block
from langgraph.config import get_stream_writer
from langgraph.graph import START, MessagesState, StateGraph
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    LanggraphOpenaiServe,
    status_event,
)
from langgraph_openai_serve.testing import ScriptedChatModel

SOURCE_URL = "https://docs.langchain.com/oss/python/langgraph/overview"
# A stand-in model that says how much of the conversation it was given.
model = ScriptedChatModel(
    responder=lambda messages: (
        f"LangGraph builds agents as graphs [1]. I see {len(messages)} messages."
    )
)


async def research(state: MessagesState) -> dict[str, Any]:
    write = get_stream_writer()
    write(status_event("Searching the LangGraph docs"))
    write(status_event("Found 1 source", done=True))
    return {}


async def answer(state: MessagesState) -> dict[str, Any]:
    reply = await model.ainvoke(state["messages"])
    marker = reply.text.index("[1]")
    cited = create_citation(
        url=SOURCE_URL,
        title="LangGraph overview",
        start_index=marker,
        end_index=marker + 2,  # inclusive, as OpenAI's end_index
    )
    text = create_text_block(text=reply.text, annotations=[cited])
    message = AIMessage(content_blocks=[text], usage_metadata=reply.usage_metadata)
    return {"messages": [message]}


builder = StateGraph(MessagesState)
builder.add_node(research)
builder.add_node(answer)
builder.add_edge(START, "research")
builder.add_edge("research", "answer")

app = FastAPI()
LanggraphOpenaiServe(
    graphs=GraphRegistry(
        registry={
            "research": GraphConfig(
                graph=builder.compile(),
                description="Answers with a status trail and a cited source.",
                features={GraphFeature.CLIENT_EVENTS},
            )
        }
    ),
    app=app,
).bind_openai_api()
