"""Request bodies validated straight from bytes into their schema model.

FastAPI's body parameters decode the JSON with ``json.loads``, solve a
dependency graph and validate the resulting dict: three passes per request.
``model_validate_json`` does it in one pass inside pydantic-core. A failure
becomes the same ``RequestValidationError`` FastAPI would raise (locations
under ``body``, the decoded body attached), so the error envelope and its
``param`` paths are unchanged. ``openapi_body`` keeps the schema in the docs.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError
from starlette.requests import Request

Model = TypeVar("Model", bound=BaseModel)


async def parse_body(request: Request, model: type[Model]) -> Model:
    """``model`` validated from the request's JSON body."""
    raw = await request.body()
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        errors = [
            {**error, "loc": ("body", *error["loc"])}
            for error in exc.errors(include_url=False)
        ]
        raise RequestValidationError(errors, body=_decoded(raw)) from None


def _decoded(raw: bytes) -> Any:
    # Only the error path decodes twice: the param walk needs the body's shape.
    try:
        return json.loads(raw)
    except ValueError:
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


def document_bodies(app: FastAPI, *models: type[BaseModel]) -> None:
    """Add the schemas of ``models`` (and what they reference) to ``app``'s
    OpenAPI components, where ``openapi_body`` points."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        document = generate()  # cached by FastAPI until the routes change
        schemas = document.setdefault("components", {}).setdefault("schemas", {})
        for model in models:
            if model.__name__ not in schemas:
                schema = model.model_json_schema(ref_template=_COMPONENT_REF)
                schemas.update(schema.pop("$defs", {}))
                schemas[model.__name__] = schema
        return document

    app.openapi = openapi  # type: ignore[method-assign]
