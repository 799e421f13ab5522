"""The sweeper: a background task that deletes the bytes of expired files.

Expired files are hidden from the API the moment they expire (every read
checks ``expires_at``); the sweep only reclaims their storage, so its interval
trades storage for S3 requests, never correctness.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from lgos_files_api.catalog import FileCatalog
from lgos_files_api.errors import StoreError

logger = logging.getLogger("lgos_files_api")


async def sweep_forever(
    catalog: FileCatalog, *, interval: float, clock: Callable[[], float]
) -> None:
    """Sweep now, then every ``interval`` seconds, until cancelled."""
    while True:
        try:
            await catalog.sweep(clock())
        except StoreError as exc:
            logger.warning("sweep.failed: %s", exc.message)
        except Exception:
            # A bug here must not stop future sweeps; it is logged in full.
            logger.exception("sweep.crashed")
        await asyncio.sleep(interval)
