"""Which tools a Responses request selects, checked against the graph.

Client functions stay client-owned; ``custom`` and ``web_search`` selectors
pick registered server tools by name. Every mismatch is a 400 naming the
offending ``tools`` or ``tool_choice`` entry.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass

from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.graph.request import (
    ClientFunctionTool,
    NamedCustomToolChoice,
    NamedFunctionToolChoice,
    ToolChoice,
)
from langgraph_openai_serve.openai.responses import schemas

WEB_SEARCH = "web_search"


@dataclass(frozen=True, slots=True)
class ToolSelection:
    functions: tuple[ClientFunctionTool, ...]
    server_tools: tuple[str, ...]
    tool_choice: ToolChoice


def select_tools(
    body: schemas.ResponseCreateRequest,
    registered: Set[str],
    approval_label: str | None = None,
) -> ToolSelection:
    """Split ``body.tools`` into client functions and selected server tools.

    An ``mcp`` entry only declares that the client takes the approvals of a
    graph presenting interrupts as MCP approvals (``approval_label``).

    Raises:
        InvalidRequestError: an unregistered or overridden server tool, a
            function named like a server tool, an ``mcp`` entry for another
            label, or an impossible tool_choice.
    """
    functions: list[ClientFunctionTool] = []
    selected: list[str] = []
    for index, tool in enumerate(body.tools or ()):
        if isinstance(tool, schemas.McpApprovalServer):
            _check_approval_server(tool, index, approval_label)
            continue
        if isinstance(tool, schemas.FunctionTool):
            if tool.name in registered:
                raise InvalidRequestError(
                    f"'{tool.name}' is a server tool of this model; select it with "
                    f'{{"type": "custom", "name": "{tool.name}"}} instead.',
                    param=f"tools[{index}].name",
                )
            functions.append(
                ClientFunctionTool(
                    name=tool.name,
                    description=tool.description,
                    parameters=tool.parameters,
                    strict=tool.strict,
                )
            )
            continue
        name = WEB_SEARCH if isinstance(tool, schemas.WebSearchSelector) else tool.name
        if name not in registered or (
            isinstance(tool, schemas.CustomToolSelector) and name == WEB_SEARCH
        ):
            param = "type" if isinstance(tool, schemas.WebSearchSelector) else "name"
            raise InvalidRequestError(
                f"This model has no server tool '{name}'.",
                param=f"tools[{index}].{param}",
            )
        if name in selected:
            raise InvalidRequestError(
                f"Server tool '{name}' is selected twice.", param=f"tools[{index}]"
            )
        selected.append(name)
    return ToolSelection(
        functions=tuple(functions),
        server_tools=tuple(selected),
        tool_choice=_choice(body.tool_choice, functions, selected),
    )


def _check_approval_server(
    tool: schemas.McpApprovalServer, index: int, approval_label: str | None
) -> None:
    if approval_label is None:
        raise InvalidRequestError(
            "LGOS runs no MCP servers; an 'mcp' tool is only accepted by models "
            "that present interrupts as MCP approvals.",
            param=f"tools[{index}].type",
        )
    if tool.server_label != approval_label:
        raise InvalidRequestError(
            f"This model's approvals come from server_label '{approval_label}'.",
            param=f"tools[{index}].server_label",
        )


def _choice(
    choice: object, functions: list[ClientFunctionTool], selected: list[str]
) -> ToolChoice:
    if isinstance(choice, schemas.NamedFunctionChoice):
        if choice.name not in {tool.name for tool in functions}:
            raise InvalidRequestError(
                f"tool_choice names function '{choice.name}', which is not in tools.",
                param="tool_choice.name",
            )
        return NamedFunctionToolChoice(choice.name)
    if isinstance(choice, schemas.NamedCustomChoice):
        if choice.name not in selected or choice.name == WEB_SEARCH:
            raise InvalidRequestError(
                f"tool_choice names custom tool '{choice.name}', which is not a "
                "selected server tool.",
                param="tool_choice.name",
            )
        return NamedCustomToolChoice(choice.name)
    return choice  # type: ignore[return-value]
