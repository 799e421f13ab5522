"""``LGOS_*`` settings, read from the environment when a server is built.

Nothing reads the environment at import time: ``LanggraphOpenaiServe`` builds
a ``Settings`` when it is constructed, unless one is passed in.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def normalize_prefix(value: str) -> str:
    """``v1/`` -> ``/v1``; the root prefix is refused (it would shadow the host)."""
    prefix = "/" + value.strip().strip("/")
    if prefix == "/":
        raise ValueError("the OpenAI API prefix must not be '/'")
    return prefix


class Settings(BaseSettings):
    """Deployment settings of the OpenAI-compatible API."""

    model_config = SettingsConfigDict(env_prefix="LGOS_", frozen=True, extra="ignore")

    OPENAI_API_PREFIX: str = "/v1"
    """Where the OpenAI routes are mounted."""
    OPENAI_API_DOCS_ENABLED: bool = False
    """Expose ``{prefix}/docs``, ``{prefix}/redoc`` and ``{prefix}/openapi.json``."""
    SSE_PING_INTERVAL: float = Field(default=15.0, gt=0)
    """Seconds of silence after which a stream sends a ``: ping`` comment."""

    @field_validator("OPENAI_API_PREFIX")
    @classmethod
    def _prefix(cls, value: str) -> str:
        return normalize_prefix(value)

    def docs_kwargs(self) -> dict[str, Any]:
        """FastAPI constructor arguments for the API documentation routes."""
        if self.OPENAI_API_DOCS_ENABLED:
            return {}
        return {"docs_url": None, "redoc_url": None, "openapi_url": None}
