"""The request body of ``POST /batches``, strictly validated."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from langgraph_openai_serve.openai.metadata import check_metadata

_NO_RESERVED_KEYS: frozenset[str] = frozenset()


class OutputExpiresAfter(BaseModel):
    model_config = ConfigDict(extra="forbid")

    anchor: Literal["created_at"]
    seconds: int = Field(ge=3600, le=2_592_000)


class BatchCreateRequest(BaseModel):
    """``POST /batches``: OpenAI's ``BatchCreateParams``, for the endpoints
    LGOS serves."""

    model_config = ConfigDict(extra="forbid")

    input_file_id: str = Field(min_length=1)
    endpoint: Literal["/v1/responses", "/v1/chat/completions"]
    completion_window: Literal["24h"]
    metadata: dict[str, str] | None = None
    output_expires_after: OutputExpiresAfter | None = None

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        return check_metadata(value, reserved=_NO_RESERVED_KEYS)
