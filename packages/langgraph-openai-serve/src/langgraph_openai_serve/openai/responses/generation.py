"""A Responses request's generation controls and ``text.format``
(``openai/generation.py``)."""

from __future__ import annotations

from langgraph_openai_serve.graph.config import GraphConfig
from langgraph_openai_serve.graph.generation import GenerationOptions
from langgraph_openai_serve.openai.generation import (
    NONE,
    Generation,
    check_controls,
    output_schema,
)
from langgraph_openai_serve.openai.responses.schemas import (
    JsonSchemaFormat,
    ResponseCreateRequest,
)


def responses_generation(
    body: ResponseCreateRequest, config: GraphConfig
) -> Generation:
    """The controls and schema of a Responses request, checked against
    ``config`` (see ``chat_generation``)."""
    text_format = body.text.format if body.text is not None else None
    if (
        body.temperature is None
        and body.top_p is None
        and body.max_output_tokens is None
        and not isinstance(text_format, JsonSchemaFormat)
    ):
        return NONE
    options = GenerationOptions(
        temperature=body.temperature,
        top_p=body.top_p,
        max_output_tokens=body.max_output_tokens,
    )
    check_controls(options, config, {})
    wanted = None
    if isinstance(text_format, JsonSchemaFormat):
        wanted = output_schema(
            config,
            "text.format",
            text_format.name,
            text_format.schema_,
            text_format.description,
            text_format.strict,
        )
    return Generation(options, wanted)
