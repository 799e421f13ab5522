"""``LGOS_CHAINLIT_*`` settings: where the UI finds the gateway and the Files API.

Built at the edge (``app.py``, the CLI), never at import, and passed down as
plain values.
"""

from __future__ import annotations

import hmac
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

CatalogSource = Literal["litellm", "lgos"]
GATEWAY_FOLLOW_PATH = "/lgos/v1"
"""The stack's LiteLLM pass-through to LGOS's Responses API (its seed config)."""


def _base_url(value: str) -> str:
    url = value.strip().rstrip("/")
    if not url.startswith(("http://", "https://")) or not url.endswith("/v1"):
        raise ValueError(f"must be an http(s) OpenAI base URL ending in /v1: {value!r}")
    return url


class UIConfig(BaseSettings):
    """The UI's configuration, read from ``LGOS_CHAINLIT_*`` variables."""

    model_config = SettingsConfigDict(
        env_prefix="LGOS_CHAINLIT_", frozen=True, extra="ignore"
    )

    GATEWAY_URL: str = "http://127.0.0.1:4000/v1"
    """OpenAI base URL for Responses: LiteLLM, or LGOS itself (``CATALOG=lgos``)."""
    GATEWAY_KEY: SecretStr = SecretStr("no-key")
    """The gateway's UI key (the stack's LiteLLM: ``LGOS_GATEWAY_UI_KEYS``), or
    an LGOS gateway key (``CATALOG=lgos``): every request names the signed-in
    user in ``x-lgos-end-user``, so each user is a tenant of their own."""
    FOLLOW_URL: str | None = None
    """OpenAI base URL that follows background runs (streams a retrieved
    Response, cancels it) with LGOS's own Response ids: the gateway's
    pass-through to LGOS. Unset: ``<gateway>/lgos/v1`` with ``CATALOG=litellm``
    (the stack's LiteLLM route), ``GATEWAY_URL`` itself with ``CATALOG=lgos``."""
    CATALOG: CatalogSource = "litellm"
    """``litellm``: read ``/model/info``; ``lgos``: direct LGOS ``/v1/models``."""
    FILES_URL: str | None = None
    """OpenAI base URL of the Files API; unset disables attachments and display_file."""
    FILES_KEY: SecretStr = SecretStr("no-key")
    """A gateway key of the Files API (``LGOS_FILES_GATEWAY_KEYS``): it acts
    for the user each request names, whose files are theirs alone."""
    HOME: Path = Path(".lgos-chainlit")
    """Chainlit's app root (``.chainlit/``, ``.files/``) and the chat ledgers."""
    TIMEOUT: float = Field(default=300.0, gt=0)
    """Seconds per HTTP request (a streamed answer counts as one)."""
    MAX_DISPLAY_BYTES: int = Field(default=25 * 1024 * 1024, gt=0)
    """Largest file ``display_file`` downloads."""
    MAX_MESSAGE_BYTES: int = Field(default=2 * 1024 * 1024, gt=0, le=8 * 1024 * 1024)
    """Largest typed message (UTF-8 bytes); a larger one is answered with a
    message saying so, and nothing is sent. At most 8 MiB, so that a message
    over it still fits the Socket.IO frame (``limits.py``)."""

    DEFAULT_GRAPH: str = "citations"
    """The graph a new chat starts on: a model name or its last path segment
    (``citations`` matches ``lgos/citations``); the first listed when absent."""

    USERS: dict[str, SecretStr] = Field(default_factory=dict)
    """JSON ``{"name": "password"}``: password login; each user's chats are
    kept, listed and resumed after a page reload."""
    HISTORY: bool = True
    """Without ``USERS``: keep each browser's chats (listed in the sidebar,
    resumed after a reload or a closed tab) under a guest identity made at
    its first visit, with no login page. False: no history, and a reload
    starts a new chat. Either way Chainlit needs ``CHAINLIT_AUTH_SECRET``;
    the ``lgos-chainlit`` command makes one in ``HOME`` when it is unset."""

    @field_validator("GATEWAY_URL")
    @classmethod
    def _gateway(cls, value: str) -> str:
        return _base_url(value)

    @field_validator("FOLLOW_URL")
    @classmethod
    def _follow(cls, value: str | None) -> str | None:
        return _base_url(value) if value else None

    @property
    def follow_url(self) -> str:
        """Where background runs are followed (see ``FOLLOW_URL``)."""
        if self.FOLLOW_URL:
            return self.FOLLOW_URL
        if self.CATALOG == "lgos":
            return self.GATEWAY_URL
        return self.GATEWAY_URL.removesuffix("/v1") + GATEWAY_FOLLOW_PATH

    @field_validator("FILES_URL")
    @classmethod
    def _files(cls, value: str | None) -> str | None:
        return _base_url(value) if value else None

    def check_password(self, username: str, password: str) -> bool:
        """Whether ``password`` is ``username``'s (constant time)."""
        secret = self.USERS.get(username)
        expected = secret.get_secret_value() if secret is not None else ""
        matches = hmac.compare_digest(password.encode(), expected.encode())
        return secret is not None and matches

    @property
    def signs_in(self) -> bool:
        """Whether Chainlit runs with users (password login or guests), and so
        with a data layer and an auth secret."""
        return bool(self.USERS) or self.HISTORY

    @property
    def history_dir(self) -> Path:
        """Chainlit's users, threads and steps (with login or guests)."""
        return self.HOME / "history"

    @property
    def chats_dir(self) -> Path:
        """Where each chat's ledger is kept (one JSON file per thread)."""
        return self.HOME / "chats"
