"""Where a process is in its life: starting, serving, draining, stopping.

A fleet needs each process to say when it should get no more work before it
stops taking any: ``/health/ready`` reports this state, and the streams that
can be resumed elsewhere (followers of background runs) end cleanly when the
process stops accepting connections.

- **started**: graphs resolved (the app's lifespan ran), the worker running.
- **draining**: a SIGTERM arrived; the process still serves but answers
  ``/health/ready`` with 503 so balancers route elsewhere.
- **stopped**: it no longer accepts; followers of background runs end now
  (their clients re-attach on another process), foreground streams finish.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class Lifecycle:
    """The process's state; changed from its event loop's thread only."""

    def __init__(self) -> None:
        self.started = False
        self.draining_since: float | None = None
        """``time.monotonic()`` when draining began; ``None`` while serving."""
        self.stopped = False
        self._on_stop: set[Callable[[], object]] = set()

    @property
    def draining(self) -> bool:
        return self.draining_since is not None

    def start(self) -> None:
        self.started = True

    def drain(self) -> None:
        """Turn not-ready (idempotent); serving goes on."""
        if self.draining_since is None:
            self.draining_since = time.monotonic()

    def stop(self) -> None:
        """Stop: not ready, and every ``on_stop`` callback runs once now."""
        self.drain()
        if self.stopped:
            return
        self.stopped = True
        callbacks, self._on_stop = self._on_stop, set()
        for callback in callbacks:
            callback()

    def on_stop(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Call ``callback`` when the process stops (at once if it has);
        returns what unsubscribes it."""
        if self.stopped:
            callback()
            return _nothing
        self._on_stop.add(callback)
        return lambda: self._on_stop.discard(callback)


def _nothing() -> None:
    return None
