"""The graph catalog: which models exist and what each one supports.

Two sources, one result (``GraphInfo``):

* ``LiteLLMCatalog`` reads LiteLLM's native ``GET /model/info``: ``model_name``
  routes the request, ``model_info.lgos`` (copied there by the model-sync job)
  is the complete LGOS extension, client settings included.
* ``LgosCatalog`` talks to LGOS directly with the OpenAI SDK: descriptions,
  features and tools from ``models.list()``, client settings from
  ``models.retrieve()`` (the list omits them).

A model without the extension (a gateway that rebuilt the Model object) is
kept, marked ``limited``: plain text still works, but the UI offers no
settings, tools or files and says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpx
from openai import AsyncOpenAI

LIMITED_NOTICE = (
    "The gateway does not pass on this graph's LGOS details, so it runs with "
    "limited functionality: plain text only, without runtime settings, tools, "
    "file attachments or interrupts."
)


class CatalogError(Exception):
    """The catalog could not be read."""


@dataclass(frozen=True, slots=True)
class GraphInfo:
    """One model as the UI sees it."""

    model: str
    description: str = ""
    features: frozenset[str] = frozenset()
    server_tools: tuple[str, ...] = ()
    client_tools: tuple[str, ...] = ()
    client_settings: Mapping[str, Any] | None = None
    """The ``lgos.client_settings`` descriptor (``json_schema`` + ``defaults``)."""
    limited: bool = False
    """True when the ``lgos`` extension was missing or unreadable."""
    stores_responses: bool = False
    """The deployment keeps Responses: turns chain by ``previous_response_id``."""

    def supports(self, feature: str) -> bool:
        return feature in self.features

    def offers_client_tool(self, name: str) -> bool:
        return name in self.client_tools


def _names(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(sorted({item for item in value if isinstance(item, str) and item}))


def graph_info(model: str, lgos: Any) -> GraphInfo:
    """``GraphInfo`` from a model name and its (possibly missing) extension.

    Unknown fields and feature values are ignored, as the extension is additive.
    """
    if not isinstance(lgos, Mapping):
        return GraphInfo(model=model, limited=True)
    description = lgos.get("description")
    settings = lgos.get("client_settings")
    valid_settings = (
        isinstance(settings, Mapping)
        and isinstance(settings.get("json_schema"), Mapping)
        and isinstance(settings.get("defaults", {}), Mapping)
    )
    return GraphInfo(
        model=model,
        description=description if isinstance(description, str) else "",
        features=frozenset(_names(lgos.get("features"))),
        server_tools=_names(lgos.get("server_tools")),
        client_tools=_names(lgos.get("client_tools")),
        client_settings=settings if valid_settings else None,
        stores_responses=lgos.get("stores_responses") is True,
    )


class Catalog(Protocol):
    async def list_graphs(self) -> list[GraphInfo]:
        """Every model, with as much detail as the source gives cheaply."""
        ...

    async def describe(self, model: str) -> GraphInfo:
        """One model in full detail (client settings included)."""
        ...


class LiteLLMCatalog:
    """LiteLLM's ``/model/info``; one request serves list and detail."""

    def __init__(self, http: httpx.AsyncClient, base_url: str, api_key: str) -> None:
        self._http = http
        root = base_url.rstrip("/")
        self._url = (root.removesuffix("/v1") or root) + "/model/info"
        self._headers = {"Authorization": f"Bearer {api_key}"}

    async def _entries(self) -> dict[str, GraphInfo]:
        try:
            response = await self._http.get(self._url, headers=self._headers)
        except httpx.HTTPError as exc:
            raise CatalogError(f"GET {self._url} failed: {exc}") from exc
        if response.status_code != 200:
            detail = response.text[:200]
            raise CatalogError(
                f"GET {self._url} answered {response.status_code}: {detail}"
            )
        try:
            data = response.json().get("data")
        except (ValueError, AttributeError) as exc:
            raise CatalogError(f"GET {self._url} returned no JSON object") from exc
        if not isinstance(data, list):
            raise CatalogError(f"GET {self._url} returned no 'data' list")
        graphs: dict[str, GraphInfo] = {}
        for entry in data:
            if not isinstance(entry, Mapping):
                continue
            name = entry.get("model_name")
            if not isinstance(name, str) or not name or name in graphs:
                continue  # several deployments may share one model name
            info = entry.get("model_info")
            lgos = info.get("lgos") if isinstance(info, Mapping) else None
            graphs[name] = graph_info(name, lgos)
        return graphs

    async def list_graphs(self) -> list[GraphInfo]:
        return sorted((await self._entries()).values(), key=lambda g: g.model)

    async def describe(self, model: str) -> GraphInfo:
        graphs = await self._entries()
        if model not in graphs:
            raise CatalogError(f"the gateway has no model {model!r}")
        return graphs[model]


class LgosCatalog:
    """LGOS ``/v1/models`` (list) and ``/v1/models/{id}`` (detail), via the SDK."""

    def __init__(self, client: AsyncOpenAI) -> None:
        self._client = client

    async def list_graphs(self) -> list[GraphInfo]:
        try:
            page = await self._client.models.list()
        except Exception as exc:
            raise CatalogError(f"listing models failed: {exc}") from exc
        graphs = [
            graph_info(model.id, (model.model_extra or {}).get("lgos"))
            for model in page.data
        ]
        return sorted(graphs, key=lambda g: g.model)

    async def describe(self, model: str) -> GraphInfo:
        try:
            found = await self._client.models.retrieve(model)
        except Exception as exc:
            raise CatalogError(f"retrieving model {model!r} failed: {exc}") from exc
        return graph_info(found.id, (found.model_extra or {}).get("lgos"))
