"""Example graphs served by ``uv run just up`` with no external service.

Their model is LGOS's scripted chat model, so they run offline; the demos
issue replaces it with an offline OpenAI-compatible demo model.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.pregel import Pregel
from langgraph_openai_serve.testing import ScriptedChatModel


def _last_user_text(messages: list[BaseMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message.text
    return ""


def _echo(messages: list[BaseMessage]) -> AIMessage:
    said = _last_user_text(messages).strip() or "nothing yet"
    return AIMessage(
        content=f"You said: {said}. I am an offline example graph served by "
        "LangGraph OpenAI Serve; register your own graph to answer for real."
    )


def build_echo_graph() -> Pregel[MessagesState, None, MessagesState, MessagesState]:
    """One node that streams a scripted reply quoting the user."""
    model = ScriptedChatModel(responder=_echo, token_delay=0.02)

    async def answer(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile(name="echo")


def _plan(messages: list[BaseMessage]) -> AIMessage:
    return AIMessage(content="plan: restate the question, then answer briefly")


def _planned_answer(messages: list[BaseMessage]) -> AIMessage:
    question = _last_user_text(messages).strip() or "your question"
    return AIMessage(
        content=f"A planner model ran first (privately); this answer node then "
        f"replied to: {question}"
    )


def build_planner_graph() -> Pregel[MessagesState, None, MessagesState, MessagesState]:
    """A private planner model call, then a streamed answer node."""
    planner = ScriptedChatModel(responder=_plan).with_config(tags=["nostream"])
    answerer = ScriptedChatModel(responder=_planned_answer, token_delay=0.02)

    async def plan(state: MessagesState) -> dict[str, list[BaseMessage]]:
        await planner.ainvoke(state["messages"])
        return {"messages": []}

    async def answer(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await answerer.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("plan", plan)
    builder.add_node("answer", answer)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "answer")
    builder.add_edge("answer", END)
    return builder.compile(name="planner")
