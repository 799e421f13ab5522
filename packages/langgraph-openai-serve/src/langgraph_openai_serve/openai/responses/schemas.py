"""The supported subset of the Responses create request, strictly validated.

Unknown fields fail. A few fields real clients send with harmless values are
accepted only with those values: ``include: []`` (the Agents SDK),
``text.format`` of type ``text`` (the default; ``json_schema`` and the
generation controls only for graphs that declare them, checked in
``openai/generation.py``), and the null ``caller`` /
``namespace`` / ``async`` fields of replayed SDK output items. What the SDKs'
parse helpers add to the items they hand back (``parsed`` on output text,
``parsed_arguments`` on function calls, any value) is accepted and dropped:
it is the client's own reading of the text and arguments replayed beside it.
``store: true`` needs a deployment that keeps Responses; the route checks it
(``LGOS_RESPONSE_STORE``). The JSON schema says so too (``include`` has no
items; ``store`` is never true unless the server keeps Responses), so the
published schema and the server agree.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
)

from langgraph_openai_serve.openai.metadata import check_metadata

RESPONSES_RESERVED_KEYS = frozenset({"lgos_settings", "lgos_run_id", "lgos_status"})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class InputText(_Strict):
    type: Literal["input_text"]
    text: str


class InputFile(_Strict):
    type: Literal["input_file"]
    file_id: str = Field(min_length=1)


class UrlCitation(_Strict):
    type: Literal["url_citation"]
    url: str
    title: str = ""
    start_index: int = Field(ge=0)
    end_index: int = Field(ge=0)


class OutputText(_Strict):
    type: Literal["output_text"]
    text: str
    annotations: list[UrlCitation] = Field(default_factory=list)
    logprobs: list[Any] | None = None
    # What an SDK's parse helper read from ``text``: never kept or passed on.
    parsed: Any = Field(default=None, exclude=True)


class Refusal(_Strict):
    type: Literal["refusal"]
    refusal: str


ContentPart = Annotated[
    InputText | InputFile | OutputText | Refusal, Field(discriminator="type")
]


class Message(_Strict):
    """An input message, or an assistant output message being replayed."""

    type: Literal["message"] | None = None
    role: Literal["user", "system", "developer", "assistant"]
    content: str | list[ContentPart]
    id: str | None = None
    status: Literal["in_progress", "completed", "incomplete"] | None = None
    phase: Literal["commentary", "final_answer"] | None = None


class DirectCaller(_Strict):
    type: Literal["direct"]


class FunctionCall(_Strict):
    type: Literal["function_call"]
    call_id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    arguments: str
    id: str | None = None
    status: Literal["in_progress", "completed", "incomplete"] | None = None
    caller: DirectCaller | None = None
    namespace: None = None
    async_: None = Field(default=None, alias="async")
    # What an SDK's parse helper read from ``arguments``: never kept.
    parsed_arguments: Any = Field(default=None, exclude=True)


class FunctionCallOutput(_Strict):
    type: Literal["function_call_output"]
    call_id: str = Field(min_length=1)
    output: str
    id: str | None = None
    status: Literal["in_progress", "completed", "incomplete"] | None = None
    # The output item's own fields, as an SDK hands a kept item back.
    caller: DirectCaller | None = None
    created_by: str | None = None
    name: str | None = None
    namespace: None = None


class CustomToolCall(_Strict):
    """A server-executed custom tool call being replayed."""

    type: Literal["custom_tool_call"]
    call_id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    input: str
    id: str | None = None
    status: Literal["in_progress", "completed", "incomplete"] | None = None
    caller: DirectCaller | None = None
    namespace: None = None
    async_: None = Field(default=None, alias="async")


class CustomToolCallOutput(_Strict):
    type: Literal["custom_tool_call_output"]
    call_id: str = Field(min_length=1)
    output: str
    id: str | None = None
    status: Literal["in_progress", "completed", "incomplete"] | None = None
    caller: DirectCaller | None = None
    created_by: str | None = None


class WebSearchAction(_Strict):
    type: Literal["search"]
    query: str | None = None
    queries: list[str] | None = None
    sources: list[dict[str, Any]] | None = None


class WebSearchCall(_Strict):
    """A completed web search being replayed (its results stay private)."""

    type: Literal["web_search_call"]
    id: str = Field(min_length=1)
    status: Literal["in_progress", "searching", "completed", "failed", "incomplete"]
    action: WebSearchAction


class SummaryText(_Strict):
    type: Literal["summary_text"]
    text: str


class ReasoningText(_Strict):
    type: Literal["reasoning_text"]
    text: str


class Reasoning(_Strict):
    """A reasoning item being replayed: status updates LGOS showed as
    reasoning summaries. It is no part of the conversation a graph reads."""

    type: Literal["reasoning"]
    id: str = Field(min_length=1)
    summary: list[SummaryText]
    content: list[ReasoningText] | None = None
    encrypted_content: None = None
    status: Literal["in_progress", "completed", "incomplete"] | None = None


class McpApprovalResponse(_Strict):
    """Approves or rejects one presented ``mcp_approval_request``."""

    type: Literal["mcp_approval_response"]
    approval_request_id: str = Field(min_length=1)
    approve: bool
    reason: str | None = None
    id: str | None = None


class ItemReference(_Strict):
    """An item of a kept Response, by its id (``continuation.py`` puts the
    item itself in its place before anything reads the input)."""

    type: Literal["item_reference"] | None = None
    id: str = Field(min_length=1)


def _item_kind(value: Any) -> str:
    if isinstance(value, dict):
        kind = value.get("type")
        if kind is None and "role" not in value and "id" in value:
            return "item_reference"  # OpenAI's type is optional here
        return str(kind or "message")
    return str(getattr(value, "type", None) or "message")


# Messages may omit ``type`` (the "easy" input form), so the item kind is
# computed; ``openai/validation.py`` points ``item_type_invalid`` at ``type``.
InputItem = Annotated[
    Annotated[Message, Tag("message")]
    | Annotated[FunctionCall, Tag("function_call")]
    | Annotated[FunctionCallOutput, Tag("function_call_output")]
    | Annotated[CustomToolCall, Tag("custom_tool_call")]
    | Annotated[CustomToolCallOutput, Tag("custom_tool_call_output")]
    | Annotated[WebSearchCall, Tag("web_search_call")]
    | Annotated[Reasoning, Tag("reasoning")]
    | Annotated[McpApprovalResponse, Tag("mcp_approval_response")]
    | Annotated[ItemReference, Tag("item_reference")],
    Discriminator(
        _item_kind,
        custom_error_type="item_type_invalid",
        custom_error_message="unsupported input item type",
    ),
]


class FunctionTool(_Strict):
    type: Literal["function"]
    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class CustomToolSelector(_Strict):
    """Selects a registered server tool by name; the graph owns the rest."""

    type: Literal["custom"]
    name: str = Field(min_length=1)


class WebSearchSelector(_Strict):
    type: Literal["web_search"]


class McpApprovalServer(_Strict):
    """Declares that the client answers ``mcp_approval_request`` items with
    this label (how the Agents SDK's ``HostedMCPTool`` takes approvals); the
    graph is the server, so LGOS connects nowhere."""

    type: Literal["mcp"]
    server_label: str = Field(min_length=1)
    server_description: str | None = None
    require_approval: Literal["always"] | None = None


Tool = Annotated[
    FunctionTool | CustomToolSelector | WebSearchSelector | McpApprovalServer,
    Field(discriminator="type"),
]


class NamedFunctionChoice(_Strict):
    type: Literal["function"]
    name: str


class NamedCustomChoice(_Strict):
    type: Literal["custom"]
    name: str


NamedChoice = Annotated[
    NamedFunctionChoice | NamedCustomChoice, Field(discriminator="type")
]


class PlainTextFormat(_Strict):
    type: Literal["text"]


class JsonSchemaFormat(_Strict):
    """Structured output, for graphs that declare it (``openai/generation.py``)."""

    type: Literal["json_schema"]
    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")
    schema_: dict[str, Any] = Field(alias="schema")
    description: str | None = None
    strict: bool | None = None


class TextOptions(_Strict):
    """``text``: plain text, or a JSON schema for graphs that declare it."""

    format: (
        Annotated[PlainTextFormat | JsonSchemaFormat, Field(discriminator="type")]
        | None
    ) = None


class ReasoningOptions(_Strict):
    """``reasoning``: a ``summary`` asks for status updates as reasoning
    summary items (``statuses.py``); the graph owns its model's effort."""

    summary: Literal["auto", "concise", "detailed"] | None = None
    effort: None = None


class ConversationRef(_Strict):
    """``conversation`` as an object: ``{"id": "conv_..."}``."""

    id: str = Field(min_length=1)


class ResponseCreateRequest(_Strict):
    """``POST /responses``, as far as LGOS supports it."""

    model: str
    input: str | list[InputItem]
    instructions: str | None = None
    metadata: dict[str, str] | None = None
    user: str | None = None
    tools: list[Tool] | None = None
    tool_choice: Literal["none", "auto", "required"] | NamedChoice | None = None
    parallel_tool_calls: bool | None = None
    stream: bool | None = False
    store: bool | None = Field(default=None, json_schema_extra={"enum": [False, None]})
    include: list[str] | None = Field(default=None, json_schema_extra={"maxItems": 0})
    text: TextOptions | None = None
    reasoning: ReasoningOptions | None = None
    # Generation controls: for graphs that declare them.
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    max_output_tokens: int | None = Field(default=None, ge=1)
    previous_response_id: str | None = None
    conversation: str | ConversationRef | None = None
    background: bool | None = None

    @property
    def conversation_id(self) -> str | None:
        """The id ``conversation`` names, in either form."""
        if isinstance(self.conversation, ConversationRef):
            return self.conversation.id
        return self.conversation

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        return check_metadata(value, reserved=RESPONSES_RESERVED_KEYS)

    @field_validator("include")
    @classmethod
    def _include(cls, value: list[str] | None) -> list[str] | None:
        if value:
            raise ValueError("LGOS supports no 'include' values; send [] or omit it")
        return value
