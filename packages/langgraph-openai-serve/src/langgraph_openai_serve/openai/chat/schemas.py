"""The supported subset of the Chat Completions request, strictly validated.

Unknown fields fail (``extra="forbid"``), so deprecated ``functions`` /
``function_call``, ``n``, ``logit_bias``, image and audio parts and inline file
data are rejected with the offending ``param`` rather than silently ignored.
The generation controls and ``response_format`` a graph may declare are
validated here and refused later (``openai/generation.py``) for graphs that
do not declare them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from langgraph_openai_serve.openai.metadata import check_metadata

_STRICT = ConfigDict(extra="forbid", populate_by_name=True)
_CHAT_RESERVED_KEYS = frozenset({"lgos_settings"})


class _Strict(BaseModel):
    model_config = _STRICT


class TextPart(_Strict):
    type: Literal["text"]
    text: str


class FileRef(_Strict):
    file_id: str = Field(min_length=1)


class FilePart(_Strict):
    type: Literal["file"]
    file: FileRef


class RefusalPart(_Strict):
    type: Literal["refusal"]
    refusal: str


UserPart = Annotated[TextPart | FilePart, Field(discriminator="type")]
AssistantPart = Annotated[TextPart | RefusalPart, Field(discriminator="type")]


class SystemMessage(_Strict):
    role: Literal["system"]
    content: str | list[TextPart]
    name: str | None = None


class DeveloperMessage(_Strict):
    role: Literal["developer"]
    content: str | list[TextPart]
    name: str | None = None


class UserMessage(_Strict):
    role: Literal["user"]
    content: str | list[UserPart]
    name: str | None = None


class FunctionCall(_Strict):
    name: str
    arguments: str
    # What the SDK's parse helper read from ``arguments``: never passed on.
    parsed_arguments: Any = Field(default=None, exclude=True)


class AssistantToolCall(_Strict):
    id: str = Field(min_length=1)
    type: Literal["function"]
    function: FunctionCall


class AssistantMessage(_Strict):
    role: Literal["assistant"]
    content: str | list[AssistantPart] | None = None
    name: str | None = None
    tool_calls: list[AssistantToolCall] | None = None
    refusal: str | None = None
    # Replayed SDK message objects carry these; only empty values are accepted.
    function_call: None = None
    audio: None = None
    annotations: list[dict[str, Any]] | None = None
    # What the SDK's parse helper read from ``content``: never passed on.
    parsed: Any = Field(default=None, exclude=True)


class ToolMessage(_Strict):
    role: Literal["tool"]
    content: str | list[TextPart]
    tool_call_id: str = Field(min_length=1)
    name: str | None = None
    """The tool's name, as LangChain.js's ``ToolMessage`` sends it."""


ChatMessage = Annotated[
    SystemMessage | DeveloperMessage | UserMessage | AssistantMessage | ToolMessage,
    Field(discriminator="role"),
]


class FunctionDefinition(_Strict):
    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class FunctionTool(_Strict):
    type: Literal["function"]
    function: FunctionDefinition


class NamedFunction(_Strict):
    name: str


class NamedToolChoice(_Strict):
    type: Literal["function"]
    function: NamedFunction


class TextResponseFormat(_Strict):
    type: Literal["text"]


class JsonSchemaSpec(_Strict):
    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")
    description: str | None = None
    schema_: dict[str, Any] = Field(default_factory=dict, alias="schema")
    strict: bool | None = None


class JsonSchemaResponseFormat(_Strict):
    type: Literal["json_schema"]
    json_schema: JsonSchemaSpec


ResponseFormat = Annotated[
    TextResponseFormat | JsonSchemaResponseFormat, Field(discriminator="type")
]


class StreamOptions(_Strict):
    include_usage: bool | None = None


class ChatCompletionRequest(_Strict):
    """``POST /chat/completions``, as far as LGOS supports it."""

    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    tools: list[FunctionTool] | None = None
    tool_choice: Literal["none", "auto", "required"] | NamedToolChoice | None = None
    parallel_tool_calls: bool | None = None
    metadata: dict[str, str] | None = None
    user: str | None = None
    # Generation controls and structured output: for graphs that declare them.
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    stop: str | Annotated[list[str], Field(max_length=4)] | None = None
    seed: int | None = None
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    response_format: ResponseFormat | None = None

    @field_validator("stream_options")
    @classmethod
    def validate_stream_options(
        cls, value: StreamOptions | None, info: ValidationInfo
    ) -> StreamOptions | None:
        """Allow stream options only for streaming requests."""
        if value is not None and not info.data.get("stream"):
            raise PydanticCustomError(
                "stream_options_without_stream",
                "The 'stream_options' parameter is only allowed when 'stream' is true",
            )
        return value

    @field_validator("metadata")
    @classmethod
    def _metadata_limits(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        return check_metadata(value, reserved=_CHAT_RESERVED_KEYS)
