"""Generation controls and structured output a graph may accept.

A graph owns its models, so by default a request that sets ``temperature``
or asks for a JSON schema is refused. A graph that wants them declares them
(``GraphConfig(generation_controls=...)`` and
``GraphFeature.STRUCTURED_OUTPUT``); the decoders then validate what a
request sets and hand it over here, in ``GraphRequest.generation`` and
``GraphRequest.output_schema``, for the graph to pass to its chat model
(``GenerationOptions.model_kwargs()``, ``with_structured_output``). LGOS
checks the final answer against the schema: an answer that does not match
fails the run (``StructuredOutputError``), it never passes silently.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from langgraph_openai_serve.graph.answer import Answer
from langgraph_openai_serve.graph.errors import GraphError


class GenerationControl(StrEnum):
    """A sampling or length control a graph can accept from requests."""

    TEMPERATURE = "temperature"
    TOP_P = "top_p"
    MAX_OUTPUT_TOKENS = "max_output_tokens"
    STOP = "stop"
    SEED = "seed"
    PRESENCE_PENALTY = "presence_penalty"
    FREQUENCY_PENALTY = "frequency_penalty"


@dataclass(frozen=True, slots=True)
class GenerationOptions:
    """The controls one request set (``None`` / empty: not set)."""

    temperature: float | None = None
    top_p: float | None = None
    max_output_tokens: int | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None

    def given(self) -> list[GenerationControl]:
        """The controls set, in declaration order."""
        return [
            GenerationControl(field.name)
            for field in fields(self)
            if getattr(self, field.name) not in (None, ())
        ]

    def model_kwargs(self) -> dict[str, Any]:
        """What was set, as keyword arguments of LangChain's chat models
        (``model.bind(**options.model_kwargs())``): ``max_tokens`` for the
        output limit and ``stop`` as a list."""
        kwargs: dict[str, Any] = {}
        for control in self.given():
            value = getattr(self, control.value)
            if control is GenerationControl.MAX_OUTPUT_TOKENS:
                kwargs["max_tokens"] = value
            elif control is GenerationControl.STOP:
                kwargs["stop"] = list(value)
            else:
                kwargs[control.value] = value
        return kwargs


NO_GENERATION = GenerationOptions()
"""A request that sets no control (the usual case; one shared object)."""


@dataclass(frozen=True, slots=True)
class OutputSchema:
    """The JSON schema the answer must match, as the request gave it."""

    name: str
    schema: Mapping[str, Any]
    description: str | None = None
    strict: bool | None = None

    def as_json_schema(self) -> dict[str, Any]:
        """The schema for ``model.with_structured_output(...)``: a JSON
        schema with the request's name as ``title``."""
        schema = dict(self.schema)
        schema.setdefault("title", self.name)
        if self.description is not None:
            schema.setdefault("description", self.description)
        return schema


class StructuredOutputError(GraphError):
    """The graph's answer does not match the requested JSON schema."""


def schema_problem(schema: Mapping[str, Any]) -> str | None:
    """Why ``schema`` is not a JSON schema (draft 2020-12), or ``None``."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return str(exc.message)
    return None


def check_answer(answer: Answer, wanted: OutputSchema) -> None:
    """Raise ``StructuredOutputError`` unless the answer's text is JSON that
    matches ``wanted``. An answer that calls tools, refuses or was cut short
    carries no structured output to check (the client sees why)."""
    if answer.tool_calls or answer.refusal is not None or answer.stop != "complete":
        return
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    try:
        value = json.loads(answer.text)
    except ValueError:
        raise StructuredOutputError(
            f"The graph's answer is not JSON, so it does not match the requested "
            f"schema '{wanted.name}'."
        ) from None
    error = best_match(Draft202012Validator(wanted.schema).iter_errors(value))
    if error is not None:
        where = error.json_path
        raise StructuredOutputError(
            f"The graph's answer does not match the requested schema "
            f"'{wanted.name}': {error.message} (at {where})."
        )
