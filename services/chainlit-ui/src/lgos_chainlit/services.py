"""The long-lived clients one UI process shares, built from ``UIConfig``."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
from openai import AsyncOpenAI

from lgos_chainlit.catalog import Catalog, LgosCatalog, LiteLLMCatalog
from lgos_chainlit.chats import ChatStore
from lgos_chainlit.config import UIConfig
from lgos_chainlit.files import FilesClient
from lgos_chainlit.identity import end_user_headers
from lgos_chainlit.live_turns import LiveTurns


@dataclass(frozen=True)
class UserClients:
    """The clients of one signed-in user: every request names them."""

    gateway: AsyncOpenAI
    follow: AsyncOpenAI
    files: FilesClient | None


@dataclass(frozen=True)
class Services:
    config: UIConfig
    gateway: AsyncOpenAI
    """The OpenAI client for Responses (LiteLLM, or LGOS directly)."""
    follow: AsyncOpenAI
    """The client that follows and cancels background runs (``follow_url``)."""
    catalog: Catalog
    files: FilesClient | None
    """``None`` when no Files API is configured (no attachments, no display_file)."""
    store: ChatStore
    turns: LiveTurns
    """The turns this process is answering, by chat (a reloaded page joins)."""

    def for_user(self, identifier: str | None) -> UserClients:
        """The clients for the user ``identifier`` (``None``: no one signed
        in; the requests are the gateway's own). They share the process's
        connection pools."""
        headers = end_user_headers(identifier)
        if not headers:
            return UserClients(self.gateway, self.follow, self.files)
        return UserClients(
            self.gateway.with_options(default_headers=headers),
            self.follow.with_options(default_headers=headers),
            self.files.with_headers(headers) if self.files is not None else None,
        )


def build_services(config: UIConfig) -> Services:
    key = config.GATEWAY_KEY.get_secret_value()
    gateway = AsyncOpenAI(
        base_url=config.GATEWAY_URL, api_key=key, timeout=config.TIMEOUT
    )
    follow = gateway
    if config.follow_url != config.GATEWAY_URL:
        follow = AsyncOpenAI(
            base_url=config.follow_url, api_key=key, timeout=config.TIMEOUT
        )
    catalog: Catalog
    if config.CATALOG == "lgos":
        catalog = LgosCatalog(gateway)
    else:
        http = httpx.AsyncClient(timeout=config.TIMEOUT)
        catalog = LiteLLMCatalog(http, config.GATEWAY_URL, key)
    files = None
    if config.FILES_URL:
        files_sdk = AsyncOpenAI(
            base_url=config.FILES_URL,
            api_key=config.FILES_KEY.get_secret_value(),
            timeout=config.TIMEOUT,
        )
        files = FilesClient(files_sdk, max_download_bytes=config.MAX_DISPLAY_BYTES)
    return Services(
        config,
        gateway,
        follow,
        catalog,
        files,
        ChatStore(config.chats_dir),
        LiveTurns(),
    )
