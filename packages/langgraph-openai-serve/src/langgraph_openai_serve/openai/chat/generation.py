"""A Chat request's generation controls and ``response_format``
(``openai/generation.py``)."""

from __future__ import annotations

from langgraph_openai_serve.graph.config import GraphConfig
from langgraph_openai_serve.graph.generation import GenerationControl, GenerationOptions
from langgraph_openai_serve.openai.chat.schemas import (
    ChatCompletionRequest,
    JsonSchemaResponseFormat,
)
from langgraph_openai_serve.openai.generation import (
    NONE,
    Generation,
    check_controls,
    output_schema,
)


def chat_generation(body: ChatCompletionRequest, config: GraphConfig) -> Generation:
    """The controls and schema of a Chat request, checked against ``config``.

    Raises:
        InvalidRequestError: naming a control or ``response_format`` the
            graph does not accept, or a schema that is not one.
    """
    if (
        body.temperature is None
        and body.top_p is None
        and body.max_tokens is None
        and body.max_completion_tokens is None
        and body.stop is None
        and body.seed is None
        and body.presence_penalty is None
        and body.frequency_penalty is None
        and body.response_format is None
    ):
        return NONE
    limit = body.max_completion_tokens or body.max_tokens
    stop = (body.stop,) if isinstance(body.stop, str) else tuple(body.stop or ())
    options = GenerationOptions(
        temperature=body.temperature,
        top_p=body.top_p,
        max_output_tokens=limit,
        stop=stop,
        seed=body.seed,
        presence_penalty=body.presence_penalty,
        frequency_penalty=body.frequency_penalty,
    )
    limit_param = (
        "max_completion_tokens" if body.max_completion_tokens else "max_tokens"
    )
    check_controls(options, config, {GenerationControl.MAX_OUTPUT_TOKENS: limit_param})
    wanted = None
    if isinstance(body.response_format, JsonSchemaResponseFormat):
        spec = body.response_format.json_schema
        wanted = output_schema(
            config,
            "response_format",
            spec.name,
            spec.schema_,
            spec.description,
            spec.strict,
        )
    return Generation(options, wanted)
