"""``DEMO_*`` settings of the demo processes, read at the edge.

Nothing here runs at import: each console script (and ``create_app``) builds
``DemoSettings()`` once and passes plain values down. The defaults point at
the offline services ``lgos-demo-stack`` starts on loopback; set the URLs to
use a real provider, a real SearXNG or another Files API instead.
"""

from __future__ import annotations

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_MODEL_PORT = 8001
DEFAULT_SEARCH_PORT = 8002
DEFAULT_FILES_PORT = 8100
DEFAULT_POSTGRES_PORT = 8432
DEFAULT_FILES_API_KEY = "sk-lgos-demo-files"
"""The stack's Files API key of the owner ``default`` (the demo API's tenant
without API keys): what clients upload with. The graphs use a service key."""


class DemoSettings(BaseSettings):
    """Where the demo graphs find their model, search engine and files."""

    model_config = SettingsConfigDict(
        env_prefix="DEMO_", frozen=True, extra="ignore", populate_by_name=True
    )

    MODEL_BASE_URL: str = f"http://127.0.0.1:{DEFAULT_MODEL_PORT}/v1"
    """OpenAI-compatible Chat Completions base URL every graph's model uses."""
    MODEL_API_KEY: SecretStr = SecretStr("lgos-demo")
    MODEL_NAME: str = "lgos-demo-model"
    """The model name sent to the provider (the demo model accepts any)."""
    MODEL_TOKEN_DELAY: float = Field(default=0.02, ge=0, le=5)
    """Seconds between streamed tokens of the offline demo model."""
    SEARCH_URL: str = f"http://127.0.0.1:{DEFAULT_SEARCH_PORT}"
    """A SearXNG instance (JSON format enabled) or the offline demo search."""
    FILES_URL: str = f"http://127.0.0.1:{DEFAULT_FILES_PORT}/v1"
    """LGOS's Files API base URL (``.../v1``)."""
    FILES_API_KEY: SecretStr | None = None
    """A service key of that Files API (``LGOS_FILES_SERVICE_KEYS``): the
    graphs read and write files with it for each caller's tenant (its scope
    names the owner), never for one owner all tenants share. Unset:
    ``file-display`` says it cannot read files."""
    DATABASE_URL: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("DEMO_DATABASE_URL", "LGOS_DATABASE_URL"),
    )
    """PostgreSQL for interrupt checkpoints and background runs
    (``DEMO_DATABASE_URL``, else ``LGOS_DATABASE_URL``); unset keeps both in
    memory, in this process."""

    @field_validator("MODEL_BASE_URL", "SEARCH_URL", "FILES_URL")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value.rstrip("/")
