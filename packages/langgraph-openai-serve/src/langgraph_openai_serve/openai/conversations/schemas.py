"""The request bodies of ``/conversations``, strictly validated.

Items take the shapes a Responses request's ``input`` takes (easy or full
form), at most 20 per request as at OpenAI; metadata follows OpenAI's limits.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from langgraph_openai_serve.openai.metadata import check_metadata
from langgraph_openai_serve.openai.responses.schemas import InputItem

MAX_ITEMS_PER_REQUEST = 20

_NO_RESERVED_KEYS: frozenset[str] = frozenset()


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConversationCreateRequest(_Strict):
    """``POST /conversations``."""

    items: list[InputItem] | None = Field(
        default=None, max_length=MAX_ITEMS_PER_REQUEST
    )
    metadata: dict[str, str] | None = None

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        return check_metadata(value, reserved=_NO_RESERVED_KEYS)


class ConversationUpdateRequest(_Strict):
    """``POST /conversations/{id}``: the new metadata, replacing the old."""

    metadata: dict[str, str]

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: dict[str, str]) -> dict[str, str] | None:
        return check_metadata(value, reserved=_NO_RESERVED_KEYS)


class ConversationItemsCreateRequest(_Strict):
    """``POST /conversations/{id}/items``."""

    items: list[InputItem] = Field(min_length=1, max_length=MAX_ITEMS_PER_REQUEST)
