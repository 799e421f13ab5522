from fastapi import FastAPI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph_openai_serve import GraphConfig, GraphRegistry, LanggraphOpenaiServe
from langgraph_openai_serve.testing import ScriptedChatModel

# Any LangChain chat model works here, e.g. ChatOpenAI(model="gpt-4.1-mini").
model = ScriptedChatModel(responder=lambda messages: f"You said: {messages[-1].text}")


async def chat(state: MessagesState) -> MessagesState:
    return {"messages": [await model.ainvoke(state["messages"])]}


graph = StateGraph(MessagesState).add_node(chat).add_edge(START, "chat").compile()
registry = GraphRegistry(
    registry={"echo": GraphConfig(graph=graph, description="Repeats you.")}
)

app = FastAPI()
LanggraphOpenaiServe(graphs=registry, app=app).bind_openai_api()
