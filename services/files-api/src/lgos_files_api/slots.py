"""Upload slots: how many uploads one process receives at once, in all and
per owner.

Each upload being received holds up to two S3 parts in memory (its buffer,
and the buffer's copy while a part flushes), so the number of uploads at
once is what bounds the process's memory: at most ``total`` uploads of
``2 * part_size`` each, of which one owner holds at most ``per_owner``. A
new upload past either cap is refused at once (429, ``Retry-After``), never
queued: a waiting upload would hold its connection, and its sender would
time out instead of retrying. The counts live in this process; uploads run
on one event loop, so taking a slot needs no lock.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from lgos_files_api.errors import TooManyUploadsError

RETRY_AFTER_SECONDS = 2
"""What a refused sender is told to wait: about the time an upload of a few
parts takes, so a slot is likely free by then."""


class UploadSlots:
    def __init__(self, total: int, per_owner: int) -> None:
        self.total = total
        self.per_owner = per_owner
        self._held = 0
        self._by_owner: dict[str, int] = {}

    @contextmanager
    def hold(self, owner: str) -> Iterator[None]:
        """A slot for one of ``owner``'s uploads while the block runs.

        Raises:
            TooManyUploadsError: ``owner`` or the process is at its cap.
        """
        mine = self._by_owner.get(owner, 0)
        if mine >= self.per_owner:
            raise TooManyUploadsError(
                f"Too many uploads in progress: {mine} of this owner's are "
                f"still being received (at most {self.per_owner} at once). "
                f"Try again in {RETRY_AFTER_SECONDS} seconds.",
                retry_after=RETRY_AFTER_SECONDS,
            )
        if self._held >= self.total:
            raise TooManyUploadsError(
                "Too many uploads in progress on this server; try again in "
                f"{RETRY_AFTER_SECONDS} seconds.",
                retry_after=RETRY_AFTER_SECONDS,
            )
        self._held += 1
        self._by_owner[owner] = mine + 1
        try:
            yield
        finally:
            self._held -= 1
            left = self._by_owner[owner] - 1
            if left:
                self._by_owner[owner] = left
            else:
                del self._by_owner[owner]  # an owner with no upload costs nothing
