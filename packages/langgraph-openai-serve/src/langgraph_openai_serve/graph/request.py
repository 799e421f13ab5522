"""The protocol-neutral request that graph adapters receive.

Both OpenAI decoders (Chat Completions and Responses) produce the same
``GraphRequest``; raw wire models never reach graph code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from langgraph_openai_serve.deprecation import warn_renamed
from langgraph_openai_serve.graph.generation import (
    NO_GENERATION,
    GenerationOptions,
    OutputSchema,
)


@dataclass(frozen=True, slots=True)
class ClientFunctionTool:
    """A function the client offers and executes itself."""

    name: str
    description: str | None = None
    parameters: Mapping[str, Any] | None = None
    strict: bool | None = None


@dataclass(frozen=True, slots=True)
class NamedFunctionToolChoice:
    """``tool_choice`` forcing one named client function."""

    name: str


@dataclass(frozen=True, slots=True)
class NamedCustomToolChoice:
    """``tool_choice`` forcing one selected server custom tool."""

    name: str


ToolChoice: TypeAlias = (
    Literal["none", "auto", "required"]
    | NamedFunctionToolChoice
    | NamedCustomToolChoice
    | None
)


@dataclass(frozen=True, slots=True, init=False)
class GraphRequest:
    """What a graph adapter may read from one OpenAI request.

    ``metadata`` is a read-only mapping; ``server_tools`` lists the selected
    registered server-tool names (always empty for Chat Completions).
    ``generation`` holds the generation controls the request set and
    ``output_schema`` the JSON schema its answer must match; only graphs
    that declare them receive them (``graph/generation.py``).
    ``hosted_tools`` is the reference's older name for ``server_tools``.
    """

    model: str
    metadata: Mapping[str, str] = field(default_factory=dict)
    user: str | None = None
    tools: tuple[ClientFunctionTool, ...] = ()
    tool_choice: ToolChoice = None
    parallel_tool_calls: bool | None = None
    server_tools: tuple[str, ...] = ()
    generation: GenerationOptions = NO_GENERATION
    output_schema: OutputSchema | None = None

    def __init__(
        self,
        model: str,
        metadata: Mapping[str, str] | None = None,
        user: str | None = None,
        tools: tuple[ClientFunctionTool, ...] = (),
        tool_choice: ToolChoice = None,
        parallel_tool_calls: bool | None = None,
        server_tools: tuple[str, ...] = (),
        *,
        generation: GenerationOptions = NO_GENERATION,
        output_schema: OutputSchema | None = None,
        hosted_tools: tuple[str, ...] | None = None,
    ) -> None:
        if hosted_tools is not None:
            warn_renamed("GraphRequest(hosted_tools=...)", "server_tools")
            if server_tools:
                raise TypeError("pass server_tools or hosted_tools, not both")
            server_tools = tuple(hosted_tools)
        if not isinstance(metadata, MappingProxyType):
            metadata = MappingProxyType(dict(metadata or {}))
        setattr_ = object.__setattr__
        setattr_(self, "model", model)
        setattr_(self, "metadata", metadata)
        setattr_(self, "user", user)
        setattr_(self, "tools", tools)
        setattr_(self, "tool_choice", tool_choice)
        setattr_(self, "parallel_tool_calls", parallel_tool_calls)
        setattr_(self, "server_tools", server_tools)
        setattr_(self, "generation", generation)
        setattr_(self, "output_schema", output_schema)

    @property
    def hosted_tools(self) -> tuple[str, ...]:
        """Deprecated: the selected server tools (``server_tools``)."""
        warn_renamed("GraphRequest.hosted_tools", "GraphRequest.server_tools")
        return self.server_tools
