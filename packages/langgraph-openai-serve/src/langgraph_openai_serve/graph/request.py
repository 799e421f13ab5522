"""The protocol-neutral request that graph adapters receive.

Both OpenAI decoders (Chat Completions and Responses) produce the same
``GraphRequest``; raw wire models never reach graph code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeAlias


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


@dataclass(frozen=True, slots=True)
class GraphRequest:
    """What a graph adapter may read from one OpenAI request.

    ``metadata`` is a read-only mapping; ``server_tools`` lists the selected
    registered server-tool names (always empty for Chat Completions).
    """

    model: str
    metadata: Mapping[str, str] = field(default_factory=dict)
    user: str | None = None
    tools: tuple[ClientFunctionTool, ...] = ()
    tool_choice: ToolChoice = None
    parallel_tool_calls: bool | None = None
    server_tools: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.metadata, MappingProxyType):
            object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))
