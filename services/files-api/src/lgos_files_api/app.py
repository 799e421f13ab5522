"""The app factory: settings in, a FastAPI app with its store and sweeper out."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI

from lgos_files_api.auth import KeyRing
from lgos_files_api.catalog import FileCatalog
from lgos_files_api.deps import Services
from lgos_files_api.envelope import install_error_handlers
from lgos_files_api.errors import StoreError
from lgos_files_api.routes import router
from lgos_files_api.settings import Settings
from lgos_files_api.slots import UploadSlots
from lgos_files_api.storage import open_store
from lgos_files_api.sweep import sweep_forever

logger = logging.getLogger("lgos_files_api")


def create_app(
    settings: Settings | None = None, *, clock: Callable[[], float] = time.time
) -> FastAPI:
    """The Files API; ``settings`` default to ``LGOS_FILES_*`` from the environment."""
    config = settings if settings is not None else Settings()
    keyring = KeyRing(config.API_KEYS, config.SERVICE_KEYS)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, Services]]:
        async with open_store(config) as store:
            try:
                await store.ensure_bucket()
            except StoreError as exc:
                # Serve anyway: /health reports the store until it is back.
                logger.error("startup.store_unavailable: %s", exc.message)
            catalog = FileCatalog(store, part_size=config.PART_SIZE_BYTES)
            sweeper = asyncio.create_task(
                sweep_forever(
                    catalog, interval=config.SWEEP_INTERVAL_SECONDS, clock=clock
                )
            )
            try:
                yield {
                    "services": Services(
                        catalog=catalog,
                        keyring=keyring,
                        max_upload_bytes=config.MAX_UPLOAD_BYTES,
                        clock=clock,
                        uploads=UploadSlots(
                            config.MAX_UPLOADS, config.MAX_UPLOADS_PER_OWNER
                        ),
                        upload_idle_timeout=config.UPLOAD_IDLE_TIMEOUT,
                    )
                }
            finally:
                sweeper.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await sweeper

    app = FastAPI(
        title="LGOS Files API",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    install_error_handlers(app)
    app.include_router(router)
    return app
