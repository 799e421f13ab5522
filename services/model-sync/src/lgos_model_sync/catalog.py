"""Reading one LGOS deployment's model catalog over HTTP.

``GET {base}/models`` names the graphs; ``GET {base}/models/{id}`` gives each
one's complete ``lgos`` extension (client settings are detail-only). The
``lgos`` object is kept exactly as served — key order included — because
LiteLLM must hand it to clients unchanged; pydantic only checks its shape.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import httpx
from pydantic import BaseModel, ConfigDict, ValidationError

from lgos_model_sync.deployments import Deployment, is_path_segment
from lgos_model_sync.errors import (
    CatalogError,
    CatalogHTTPError,
    InvalidModelIdError,
    MalformedCatalogError,
    UnreachableError,
)

# LiteLLM replaces any config string starting with this by an environment
# variable (secrets included) when it loads the file — anywhere, model_info
# too. A served description like that would leak a secret through /model/info.
LITELLM_ENV_REFERENCE = "os.environ/"

_Schema = TypeVar("_Schema", bound=BaseModel)


class _ListEntry(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    id: str


class _ModelList(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    object: Literal["list"]
    data: list[_ListEntry]


class _LgosExtension(BaseModel):
    # New extension fields are additive: accept and keep unknown ones.
    model_config = ConfigDict(extra="allow", strict=True)

    description: str
    features: list[str]
    server_tools: list[str]
    client_tools: list[str]
    client_settings: dict[str, Any] | None = None


class _ModelDetail(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    id: str
    object: Literal["model"]
    lgos: _LgosExtension


@dataclass(frozen=True, slots=True)
class CatalogModel:
    """One graph: its model id and its ``lgos`` object as served."""

    id: str
    lgos: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Catalog:
    """What one deployment serves, models in the order it lists them."""

    deployment: Deployment
    models: tuple[CatalogModel, ...]


def read_catalog(
    deployment: Deployment, client: httpx.Client, api_key: str | None
) -> Catalog:
    """The deployment's models with their complete ``lgos`` objects.

    Raises:
        CatalogError: unreachable, a non-200 answer, a malformed body, or a
            model id that is not one URL path segment.
    """
    reader = _Reader(deployment, client, api_key)
    listing = reader.validate(_ModelList, reader.get_json("/models"), "model list")
    ids = [entry.id for entry in listing.data]
    for model_id in ids:
        if not is_path_segment(model_id):
            raise reader.error(
                InvalidModelIdError,
                f"model id {model_id!r} is not one URL path segment "
                "(letters, digits and . _ ~ : @ - only)",
            )
    duplicates = sorted({model_id for model_id in ids if ids.count(model_id) > 1})
    if duplicates:
        raise reader.error(
            MalformedCatalogError, f"the model list repeats {duplicates}"
        )
    return Catalog(
        deployment=deployment,
        models=tuple(reader.read_model(model_id) for model_id in ids),
    )


class _Reader:
    """HTTP and validation for one deployment, with its name in every error."""

    def __init__(
        self, deployment: Deployment, client: httpx.Client, api_key: str | None
    ) -> None:
        self.deployment = deployment
        self.client = client
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def error(self, kind: type[CatalogError], detail: str) -> CatalogError:
        return kind(self.deployment.name, self.deployment.base_url, detail)

    def get_json(self, path: str) -> Any:
        url = self.deployment.base_url + path
        try:
            response = self.client.get(url, headers=self.headers)
        except httpx.HTTPError as exc:
            raise self.error(
                UnreachableError, f"GET {url} failed: {exc or type(exc).__name__}"
            ) from exc
        if response.status_code != 200:
            raise self.error(CatalogHTTPError, _status_detail(url, response))
        try:
            return json.loads(response.content)
        except ValueError:
            raise self.error(
                MalformedCatalogError, f"GET {url} did not answer JSON"
            ) from None

    def validate(self, schema: type[_Schema], body: Any, what: str) -> _Schema:
        try:
            return schema.model_validate(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "body"
            raise self.error(
                MalformedCatalogError, f"malformed {what}: {where}: {first['msg']}"
            ) from None

    def read_model(self, model_id: str) -> CatalogModel:
        body = self.get_json(f"/models/{model_id}")
        detail = self.validate(_ModelDetail, body, f"model {model_id!r}")
        if detail.id != model_id:
            raise self.error(
                MalformedCatalogError,
                f"GET /models/{model_id} answered model {detail.id!r}",
            )
        lgos: dict[str, Any] = body["lgos"]
        reference = _env_reference(lgos, "lgos")
        if reference is not None:
            raise self.error(
                MalformedCatalogError,
                f"model {model_id!r}: {reference} starts with "
                f"{LITELLM_ENV_REFERENCE!r}, which LiteLLM would replace with an "
                "environment variable",
            )
        return CatalogModel(id=model_id, lgos=lgos)


def _status_detail(url: str, response: httpx.Response) -> str:
    status = response.status_code
    if status in {401, 403}:
        return f"GET {url} was refused (HTTP {status}): check the deployment's API key"
    if status == 404 and url.endswith("/models"):
        return (
            f"GET {url} was not found (HTTP 404): the URL must be the deployment's "
            "OpenAI base URL, ending in /v1"
        )
    return f"GET {url} answered HTTP {status}"


def _env_reference(value: Any, path: str) -> str | None:
    """The path of the first string LiteLLM would treat as a secret reference."""
    if isinstance(value, str):
        return path if value.startswith(LITELLM_ENV_REFERENCE) else None
    if isinstance(value, dict):
        items: list[tuple[str, Any]] = [(f"{path}.{k}", v) for k, v in value.items()]
    elif isinstance(value, list):
        items = [(f"{path}[{i}]", v) for i, v in enumerate(value)]
    else:
        return None
    for child_path, child in items:
        found = _env_reference(child, child_path)
        if found is not None:
            return found
    return None
