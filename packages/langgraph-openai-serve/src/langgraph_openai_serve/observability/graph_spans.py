"""Node and tool spans of one graph run, from LangChain's callbacks.

``GraphSpans`` is a run's callback handler while tracing is on: a span per
graph node (``node {name}``, from the chain runs LangGraph names after its
nodes) and an ``execute_tool {name}`` span per tool run (GenAI conventions),
each the child of the nearest enclosing one, the outermost of the run's
``invoke_agent`` span. It runs inline and ignores model and retriever
events, so it costs nothing per token.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

from langgraph_openai_serve.observability.tracing import span_context_of


class GraphSpans(BaseCallbackHandler):
    run_inline = True
    ignore_llm = True
    ignore_chat_model = True
    ignore_retriever = True
    ignore_custom_event = True
    ignore_retry = True

    def __init__(self, tracer: Any, run: Any) -> None:
        self._tracer = tracer
        self._run = run
        """The ``RunWatch`` whose span (started with the run) is the root."""
        self._parents: dict[UUID, UUID | None] = {}
        self._spans: dict[UUID, Any] = {}

    def _parent(self, parent_run_id: UUID | None) -> Any:
        current = parent_run_id
        while current is not None:
            span = self._spans.get(current)
            if span is not None:
                return span_context_of(span)
            current = self._parents.get(current)
        return span_context_of(self._run.span)

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._parents[run_id] = parent_run_id
        node = metadata.get("langgraph_node") if metadata else None
        if not isinstance(node, str) or kwargs.get("name") != node:
            return  # a runnable inside a node, or the graph itself
        if node.startswith("__"):
            return  # LangGraph's own input and output steps
        assert metadata is not None
        attributes: dict[str, str | int] = {"lgos.graph.node": node}
        step = metadata.get("langgraph_step")
        if isinstance(step, int):
            attributes["lgos.graph.step"] = step
        self._spans[run_id] = self._tracer.start_span(
            f"node {node}", context=self._parent(parent_run_id), attributes=attributes
        )

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, None)

    def on_chain_error(
        self, error: BaseException, *, run_id: UUID, **kwargs: Any
    ) -> None:
        self._end(run_id, error)

    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._parents[run_id] = parent_run_id
        name = kwargs.get("name") or (serialized or {}).get("name") or "tool"
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
        call_id = kwargs.get("tool_call_id")
        if isinstance(call_id, str):
            attributes["gen_ai.tool.call.id"] = call_id
        self._spans[run_id] = self._tracer.start_span(
            f"execute_tool {name}",
            context=self._parent(parent_run_id),
            attributes=attributes,
        )

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        status = getattr(output, "status", None)
        self._end(run_id, "tool_error" if status == "error" else None)

    def on_tool_error(
        self, error: BaseException, *, run_id: UUID, **kwargs: Any
    ) -> None:
        self._end(run_id, error)

    def _end(self, run_id: UUID, error: BaseException | str | None) -> None:
        self._parents.pop(run_id, None)
        span = self._spans.pop(run_id, None)
        if span is None:
            return
        if error is not None:
            from opentelemetry.trace import Status, StatusCode

            kind = type(error).__name__ if isinstance(error, BaseException) else error
            span.set_attribute("error.type", kind)
            span.set_status(Status(StatusCode.ERROR))
        span.end()
