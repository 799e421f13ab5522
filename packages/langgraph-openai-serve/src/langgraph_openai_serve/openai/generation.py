"""Generation controls and structured output on the wire, for the graphs
that declare them (``graph/generation.py``): what both surfaces share.

Both request schemas validate the values (ranges, a stop list of at most
four, a schema name); each surface's ``generation.py`` reads its fields, and
here they are checked against what the graph declared, the JSON schema is
checked to be one, and both become the protocol-neutral
``GenerationOptions`` / ``OutputSchema``. A graph that declares nothing
keeps today's 400 naming the parameter. A request that sets none of them
costs a few attribute reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langgraph_openai_serve.graph.config import GraphConfig
from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.graph.generation import (
    NO_GENERATION,
    GenerationControl,
    GenerationOptions,
    OutputSchema,
    schema_problem,
)
from langgraph_openai_serve.openai.validation import unsupported_control


@dataclass(frozen=True, slots=True)
class Generation:
    """What one request asks of the graph's models."""

    options: GenerationOptions = NO_GENERATION
    output_schema: OutputSchema | None = None


NONE = Generation()


def check_controls(
    options: GenerationOptions,
    config: GraphConfig,
    wire_names: Mapping[GenerationControl, str],
) -> None:
    accepted = config.generation_controls
    for control in options.given():
        if control not in accepted:
            param = wire_names.get(control, control.value)
            raise InvalidRequestError(
                unsupported_control(param, sorted(c.value for c in accepted)),
                param=param,
            )


def output_schema(
    config: GraphConfig,
    param: str,
    name: str,
    schema: dict[str, Any],
    description: str | None,
    strict: bool | None,
) -> OutputSchema:
    if not config.supports(GraphFeature.STRUCTURED_OUTPUT):
        raise InvalidRequestError(
            f"This model does not accept structured output ('{param}' with a "
            "JSON schema); it answers in text.",
            param=f"{param}.type" if param == "text.format" else param,
        )
    problem = schema_problem(schema)
    if problem is not None:
        raise InvalidRequestError(
            f"The JSON schema is not valid: {problem}",
            param=f"{param}.schema"
            if param == "text.format"
            else f"{param}.json_schema.schema",
        )
    return OutputSchema(name, schema, description, strict)
