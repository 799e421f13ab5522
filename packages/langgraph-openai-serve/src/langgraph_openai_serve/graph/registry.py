"""``GraphRegistry``: model ids mapped to graph configurations."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, field_validator

from langgraph_openai_serve.graph.config import GraphConfig
from langgraph_openai_serve.graph.errors import GraphNotFoundError

# Unreserved URI characters plus ':' and '@': an id must be usable as one
# path segment (``/v1/models/{model}``) without escaping.
_MODEL_ID = re.compile(r"[A-Za-z0-9._~:@-]{1,256}")


class GraphRegistry(BaseModel):
    """The graphs one server exposes, keyed by OpenAI model id."""

    model_config = ConfigDict(validate_assignment=True, extra="forbid")

    registry: Mapping[str, GraphConfig]

    @field_validator("registry")
    @classmethod
    def _validate(cls, value: Mapping[str, GraphConfig]) -> Mapping[str, GraphConfig]:
        if not value:
            raise ValueError("the registry must contain at least one graph")
        for model_id in value:
            if not _MODEL_ID.fullmatch(model_id) or model_id in {".", ".."}:
                raise ValueError(
                    f"model id {model_id!r} must be one URL path segment: letters, "
                    "digits and . _ ~ : @ - only"
                )
        return MappingProxyType(dict(value))

    def register(self, model_id: str, config: GraphConfig) -> None:
        """Add or replace one graph through the validated boundary."""
        self.registry = {**self.registry, model_id: config}

    def get_graph(self, name: str) -> GraphConfig:
        """The configuration registered as ``name``.

        Raises:
            GraphNotFoundError: no graph has that model id.
        """
        try:
            return self.registry[name]
        except KeyError:
            raise GraphNotFoundError(name) from None

    def get_graph_names(self) -> list[str]:
        """Every registered model id, in registration order."""
        return list(self.registry)

    async def resolve_all(self) -> None:
        """Resolve every graph factory now, so configuration errors surface at
        startup instead of at the first request."""
        await asyncio.gather(
            *(config.resolve_graph() for config in self.registry.values())
        )
