"""Request bodies validated straight from bytes into their schema model.

FastAPI's body parameters decode the JSON with ``json.loads``, solve a
dependency graph and validate the resulting dict: three passes per request.
``model_validate_json`` does it in one pass inside pydantic-core. A failure
becomes the same ``RequestValidationError`` FastAPI would raise (locations
under ``body``, the decoded body attached), so the error envelope and its
``param`` paths are unchanged. ``openapi_body`` keeps the schema in the docs.

Hostile bodies are refused by cause: one larger than ``BodyLimits.max_bytes``
answers 413 before it is read whole; one nested deeper than
``BodyLimits.max_depth`` answers 400. pydantic-core's parser already stops at
``PARSER_MAX_DEPTH`` levels, so the default limit costs nothing; a lower one
is measured only for bodies with more brackets than the limit. One holding
more than ``BodyLimits.max_elements`` arrays and objects answers 400 before
it is validated: pydantic records an error per invalid element (about 2 KB
each, twice over once converted), so a megabyte of ``[{},{},...]`` would
cost a gigabyte. Counting brackets is a pass at C speed over the bytes;
strings are cut out only for bodies with more brackets than the limit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.json_limits import (
    PARSER_MAX_DEPTH,
    too_deep,
    too_many_elements,
)

Model = TypeVar("Model", bound=BaseModel)

_RECURSION_LIMIT = "recursion limit exceeded"


@dataclass(frozen=True, slots=True)
class BodyLimits:
    """How large and how deeply nested a JSON request body may be."""

    max_bytes: int
    max_depth: int = PARSER_MAX_DEPTH
    max_elements: int = 10_000


async def parse_body(request: Request, model: type[Model], limits: BodyLimits) -> Model:
    """``model`` validated from the request's JSON body.

    Raises:
        InvalidRequestError: the body is too large (413) or too deep (400).
        RequestValidationError: the body is not a valid ``model``.
    """
    raw = await _read(request, limits.max_bytes)
    if too_many_elements(raw, limits.max_elements):
        deepest = min(limits.max_depth, PARSER_MAX_DEPTH)
        if too_deep(raw, deepest):  # the cause a client can act on first
            raise _too_deep(deepest)
        raise InvalidRequestError(
            f"The JSON body holds more than {limits.max_elements} arrays and objects.",
            code="json_too_many_elements",
        )
    try:
        parsed = model.model_validate_json(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        if errors and _RECURSION_LIMIT in errors[0]["msg"]:
            raise _too_deep(min(limits.max_depth, PARSER_MAX_DEPTH)) from None
        located = [{**error, "loc": ("body", *error["loc"])} for error in errors]
        raise RequestValidationError(located, body=_decoded(raw)) from None
    if limits.max_depth < PARSER_MAX_DEPTH and too_deep(raw, limits.max_depth):
        raise _too_deep(limits.max_depth)
    return parsed


async def _read(request: Request, max_bytes: int) -> bytes:
    # What ``Request.body()`` does, counting: a body over the limit is refused
    # after at most ``max_bytes`` were read, whatever Content-Length claims.
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise _too_large(max_bytes)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_deep(max_depth: int) -> InvalidRequestError:
    return InvalidRequestError(
        f"The JSON body nests arrays and objects deeper than {max_depth} levels.",
        code="json_too_deep",
    )


def _too_large(max_bytes: int) -> InvalidRequestError:
    return InvalidRequestError(
        f"The request body is larger than the limit of {max_bytes} bytes.",
        code="request_too_large",
        status_code=413,
    )


def _decoded(raw: bytes) -> Any:
    # Only the error path decodes twice: the param walk needs the body's shape.
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


_COMPONENT_REF = "#/components/schemas/{model}"


def openapi_body(model: type[BaseModel]) -> dict[str, Any]:
    """``openapi_extra`` documenting ``model`` as the JSON request body; its
    schema lives in the components ``document_bodies`` adds."""
    return {
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {"$ref": _COMPONENT_REF.format(model=model.__name__)}
                }
            },
        }
    }


def document_bodies(
    app: FastAPI,
    *models: type[BaseModel],
    adjust: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """Add the schemas of ``models`` (and what they reference) to ``app``'s
    OpenAPI components, where ``openapi_body`` points; ``adjust`` may change
    those components once (what this server's settings allow)."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        document = generate()  # cached by FastAPI until the routes change
        schemas = document.setdefault("components", {}).setdefault("schemas", {})
        added = False
        for model in models:
            if model.__name__ not in schemas:
                schema = model.model_json_schema(ref_template=_COMPONENT_REF)
                schemas.update(schema.pop("$defs", {}))
                schemas[model.__name__] = schema
                added = True
        if added and adjust is not None:
            adjust(schemas)
        return document

    app.openapi = openapi  # type: ignore[method-assign]
