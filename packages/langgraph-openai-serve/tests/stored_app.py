"""Graphs ``lgos serve`` loads (``stored_app:registry``) for the kept-Responses
tests: ``history`` answers with the transcript it was given (so a test sees
which turns reached the graph), ``notes`` does the same in the background."""

from __future__ import annotations

from langchain_core.messages import BaseMessage
from langgraph_openai_serve import GraphConfig, GraphFeature, GraphRegistry
from langgraph_openai_serve.testing import ScriptedChatModel
from support import single_model_graph


def transcript(messages: list[BaseMessage]) -> str:
    return "Saw " + " | ".join(f"{m.type}:{m.text}" for m in messages)


def registry() -> GraphRegistry:
    return GraphRegistry(
        registry={
            "history": GraphConfig(
                graph=single_model_graph(ScriptedChatModel(responder=transcript)),
                description="answers with the conversation it saw",
            ),
            "notes": GraphConfig(
                graph=single_model_graph(ScriptedChatModel(responder=transcript)),
                description="the same, in the background",
                features={GraphFeature.BACKGROUND},
            ),
        }
    )
