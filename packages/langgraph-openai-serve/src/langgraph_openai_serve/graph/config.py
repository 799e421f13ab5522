"""``GraphConfig``: one registered graph and the adapters around it.

Everything that can be checked without running the graph is checked when the
config is built; the graph itself (possibly from a factory) is resolved once
and cached, normally at application startup.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeAlias

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel import Pregel
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator
from pydantic import model_validator as _model_validator

from langgraph_openai_serve.deprecation import warn_renamed
from langgraph_openai_serve.graph.client_settings import (
    ClientSettings,
    contract_for,
)
from langgraph_openai_serve.graph.coordination import RunCoordinator
from langgraph_openai_serve.graph.errors import GraphConfigurationError
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.graph.generation import GenerationControl
from langgraph_openai_serve.graph.request import GraphRequest

AnyGraph: TypeAlias = Pregel[Any, Any, Any, Any]
RequestToInput: TypeAlias = Callable[[GraphRequest, list[BaseMessage]], Any]
ContextFactory: TypeAlias = Callable[[GraphRequest, ClientSettings | None], Any]
OutputToMessage: TypeAlias = Callable[[Any], AIMessage | Awaitable[AIMessage]]
Callbacks: TypeAlias = Sequence[BaseCallbackHandler] | BaseCallbackManager
InterruptProtocol: TypeAlias = Literal["function_call", "mcp_approval"]

_INTERRUPT_CHECKPOINTER_METHODS = (
    "aget_tuple",
    "alist",
    "aput",
    "aput_writes",
    "adelete_thread",
)
_TOOL_NAME_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
)


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _tool_names(value: Iterable[str], label: str) -> tuple[str, ...]:
    names = tuple(value)
    for name in names:
        if not name or len(name) > 64 or not set(name) <= _TOOL_NAME_CHARS:
            raise ValueError(
                f"{label} name {name!r} must be 1-64 letters, digits, '_' or '-'"
            )
    if len(set(names)) != len(names):
        raise ValueError(f"{label} names must be unique")
    return tuple(sorted(names))


class GraphConfig(BaseModel):
    """How one LangGraph graph is served as an OpenAI model."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True, extra="forbid")

    graph: AnyGraph | Callable[[], Any]
    """A compiled graph, or a sync or async factory returning one."""
    description: str = Field(min_length=1)
    """Human-readable text advertised as ``lgos.description``."""
    streamable_node_names: frozenset[str] | None = None
    """Nodes whose model tokens are answer text; ``None`` means every node."""
    features: frozenset[GraphFeature] = frozenset()
    """Optional capabilities the graph declares; discovery advertises them."""
    server_tools: tuple[str, ...] = ()
    """Allowlisted server-executed tools (``web_search`` or custom names)."""
    client_tools: tuple[str, ...] = ()
    """Client-owned functions this graph may call, such as ``display_file``."""
    client_settings: type[ClientSettings] | None = None
    """Public per-request settings, changed through ``metadata.lgos_settings``."""
    runtime_callbacks: Callbacks | None = None
    """LangChain callback handlers (or a manager) added to every run."""
    run_coordinator: RunCoordinator | None = None
    """Leases interrupt runs; required with ``GraphFeature.INTERRUPTS``."""
    request_to_input: RequestToInput | None = None
    """``(request, messages) -> input``; default ``{"messages": messages}``."""
    context_factory: ContextFactory | None = None
    """``(request, client_settings) -> runtime context``; default the settings."""
    output_to_message: OutputToMessage | None = None
    """``output -> AIMessage``; default the last of ``output["messages"]``."""
    generation_controls: frozenset[GenerationControl] = frozenset()
    """The generation controls (``temperature``, ``top_p``...) requests may
    set; the graph reads them from ``GraphRequest.generation``. A request
    setting any other one is refused."""
    interrupt_protocol: InterruptProtocol = "function_call"
    """How the Responses surface presents a pause to clients, by name:
    function calls (default) or MCP approval requests. Only the surface knows
    what either looks like on the wire."""

    _graph: AnyGraph | None = PrivateAttr(default=None)
    _lock: asyncio.Lock | None = PrivateAttr(default=None)

    @_model_validator(mode="before")
    @classmethod
    def _hosted_tools(cls, data: Any) -> Any:
        # The reference's name for server_tools; never advertised.
        if isinstance(data, Mapping) and "hosted_tools" in data:
            # Python frames: this validator, BaseModel.__init__, the caller.
            warn_renamed("GraphConfig(hosted_tools=...)", "server_tools", stacklevel=4)
            data = dict(data)
            if data.get("server_tools"):
                raise ValueError("pass server_tools or hosted_tools, not both")
            data["server_tools"] = data.pop("hosted_tools")
        return data

    @property
    def hosted_tools(self) -> tuple[str, ...]:
        """Deprecated: the allowlisted server tools (``server_tools``)."""
        warn_renamed("GraphConfig.hosted_tools", "GraphConfig.server_tools")
        return self.server_tools

    @field_validator("streamable_node_names", mode="before")
    @classmethod
    def _node_names(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError("streamable_node_names must be a collection of names")
        if value is not None and not value:
            raise ValueError("streamable_node_names must not be empty; use None")
        return value

    @field_validator("server_tools", mode="before")
    @classmethod
    def _server_tools(cls, value: Any) -> tuple[str, ...]:
        return _tool_names(value, "server tool")

    @field_validator("client_tools", mode="before")
    @classmethod
    def _client_tools(cls, value: Any) -> tuple[str, ...]:
        return _tool_names(value, "client tool")

    @field_validator("client_settings")
    @classmethod
    def _client_settings(
        cls, value: type[ClientSettings] | None
    ) -> type[ClientSettings] | None:
        if value is not None:
            try:
                contract_for(value)
            except GraphConfigurationError as exc:
                raise ValueError(str(exc)) from exc
        return value

    @classmethod
    def validate_client_settings(
        cls, value: type[ClientSettings] | None
    ) -> type[ClientSettings] | None:
        """Deprecated: ``GraphConfig(client_settings=...)`` validates the model.

        Raises:
            GraphConfigurationError: the model breaks the settings contract.
        """
        warn_renamed(
            "GraphConfig.validate_client_settings",
            "GraphConfig(client_settings=...), which validates the model",
        )
        if value is not None:
            contract_for(value)
        return value

    @_model_validator(mode="after")
    def _consistent(self) -> GraphConfig:
        if not isinstance(self.graph, Pregel) and not callable(self.graph):
            raise ValueError("graph must be a compiled graph or a factory")
        overlap = set(self.server_tools) & set(self.client_tools)
        if overlap:
            raise ValueError(
                f"tool names {sorted(overlap)} are both server and client tools"
            )
        interrupts = GraphFeature.INTERRUPTS in self.features
        if self.run_coordinator is not None and not interrupts:
            raise ValueError("run_coordinator requires GraphFeature.INTERRUPTS")
        if interrupts and self.run_coordinator is None:
            raise ValueError("interrupt-enabled graphs need a run_coordinator")
        if self.interrupt_protocol != "function_call" and not interrupts:
            raise ValueError("interrupt_protocol requires GraphFeature.INTERRUPTS")
        if isinstance(self.graph, Pregel):
            _check_graph(self, self.graph)
            self._graph = self.graph
        return self

    def supports(self, feature: GraphFeature) -> bool:
        """Whether this graph declares ``feature``."""
        return feature in self.features

    async def resolve_graph(self) -> AnyGraph:
        """The compiled graph, calling the factory once and caching it."""
        # Read from pydantic's store of private values: ``self._graph`` first
        # fails the normal lookup (an AttributeError built and dropped) before
        # pydantic's ``__getattr__`` finds it, about 3.5 us per request.
        graph: AnyGraph | None = (self.__pydantic_private__ or {}).get("_graph")
        if graph is not None:
            return graph
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._graph is None:
                graph = await _maybe_await(self.graph())  # type: ignore[operator]
                if not isinstance(graph, Pregel):
                    raise GraphConfigurationError(
                        f"The graph factory returned {type(graph).__name__}, "
                        "not a compiled LangGraph graph."
                    )
                _check_graph_or_raise(self, graph)
                self._graph = graph
        return self._graph

    async def build_input(
        self, request: GraphRequest, messages: list[BaseMessage]
    ) -> Any:
        """The native graph input for one request."""
        if self.request_to_input is None:
            return {"messages": messages}
        return await _maybe_await(self.request_to_input(request, messages))

    async def build_context(
        self, request: GraphRequest, graph: AnyGraph | None = None
    ) -> Any:
        """The LangGraph runtime context for one request, or ``None``.

        ``graph`` is the reference's older second argument (deprecated): when
        given, a context for a graph without ``context_schema`` is refused
        here, as the runner does.
        """
        settings = (
            self.client_settings.from_metadata(request.metadata)
            if self.client_settings is not None
            else None
        )
        if self.context_factory is None:
            context = settings
        else:
            context = await _maybe_await(self.context_factory(request, settings))
        if graph is not None:
            warn_renamed(
                "GraphConfig.build_context(request, graph)", "build_context(request)"
            )
            if context is not None and graph.context_schema is None:
                raise GraphConfigurationError(
                    "A graph that produces runtime context must declare context_schema."
                )
        return context

    async def render_output(self, output: Any) -> AIMessage:
        """The durable assistant message for the graph's final output."""
        if self.output_to_message is not None:
            message = await _maybe_await(self.output_to_message(output))
            if not isinstance(message, AIMessage):
                raise GraphConfigurationError(
                    "output_to_message must return an AIMessage."
                )
            return message
        messages = (
            output.get("messages")
            if isinstance(output, Mapping)
            else getattr(output, "messages", None)
        )
        if messages is None:
            raise GraphConfigurationError(
                "Graph output has no 'messages'; configure output_to_message."
            )
        if not messages:
            return AIMessage(content="")
        last = messages[-1]
        if not isinstance(last, AIMessage):
            raise GraphConfigurationError(
                f"The final graph message is a {type(last).__name__}, not an "
                "AIMessage; configure output_to_message."
            )
        return last

    def runnable_config(self, *handlers: BaseCallbackHandler) -> RunnableConfig:
        """Callbacks for one run: the registered ones plus the server's
        (tracing); none at all when there are neither."""
        callbacks: Any
        registered = self.runtime_callbacks
        if isinstance(registered, BaseCallbackManager):
            callbacks = registered.copy()
            for handler in handlers:
                callbacks.add_handler(handler, inherit=True)
        else:
            callbacks = [*(registered or ()), *handlers]
        return {"callbacks": callbacks} if callbacks else {}


def _check_graph(config: GraphConfig, graph: AnyGraph) -> None:
    try:
        _check_graph_or_raise(config, graph)
    except GraphConfigurationError as exc:
        raise ValueError(str(exc)) from exc


def _check_graph_or_raise(config: GraphConfig, graph: AnyGraph) -> None:
    if (
        config.client_settings is not None
        and config.context_factory is None
        and graph.context_schema is not config.client_settings
    ):
        raise GraphConfigurationError(
            "A graph that uses client_settings as its runtime context must "
            "declare that model as context_schema (or configure context_factory)."
        )
    if GraphFeature.INTERRUPTS in config.features:
        checkpointer = graph.checkpointer
        if not isinstance(checkpointer, BaseCheckpointSaver) or any(
            getattr(type(checkpointer), name) is getattr(BaseCheckpointSaver, name)
            for name in _INTERRUPT_CHECKPOINTER_METHODS
        ):
            raise GraphConfigurationError(
                "Interrupt-enabled graphs need an asynchronous checkpointer "
                "implementing " + ", ".join(_INTERRUPT_CHECKPOINTER_METHODS) + "."
            )
