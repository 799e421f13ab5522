from typing import Annotated, Any

from fastapi import Depends, FastAPI
from fastapi.responses import StreamingResponse
from langgraph.graph import START, MessagesState, StateGraph
from langgraph_openai_serve import GraphConfig, GraphRegistry, LanggraphOpenaiServe
from langgraph_openai_serve.chat_completions import (
    ChatCompletionRequest,
    StreamOwner,
    decode_chat_request,
    generate_completion,
    prepare_run,
    stream_completion,
    stream_owner_dependency,
)
from langgraph_openai_serve.testing import ScriptedChatModel

model = ScriptedChatModel(responder=lambda messages: f"Host heard: {messages[-1].text}")


async def chat(state: MessagesState) -> MessagesState:
    return {"messages": [await model.ainvoke(state["messages"])]}


graph = StateGraph(MessagesState).add_node(chat).add_edge(START, "chat").compile()
registry = GraphRegistry(
    registry={"echo": GraphConfig(graph=graph, description="Repeats you.")}
)

app = FastAPI()
LanggraphOpenaiServe(graphs=registry, app=app).bind_openai_api()


@app.post("/host/v1/chat/completions", response_model=None)
async def host_chat_completion(
    chat_request: ChatCompletionRequest,
    stream_owner: Annotated[
        StreamOwner, Depends(stream_owner_dependency, scope="request")
    ],
) -> StreamingResponse | dict[str, Any]:
    graph_request, messages = decode_chat_request(chat_request)
    run = await prepare_run(graph_request, messages, registry)
    if chat_request.stream:
        body = stream_owner.start(stream_completion(chat_request, run), run)
        return StreamingResponse(body, media_type="text/event-stream")
    completion = await generate_completion(chat_request, run)
    return completion.model_dump(mode="json", exclude_none=True)
