"""The signals the running supervisor answers to.

SIGINT, SIGTERM and SIGHUP stop the stack; SIGUSR1 says "a control command
left a request in the mailbox" (``mailbox.py``).
"""

from __future__ import annotations

import signal
from types import FrameType
from typing import Any


class Interrupted(Exception):
    """SIGINT or SIGTERM arrived."""


class StopSignals:
    """SIGINT, SIGTERM and SIGHUP raise ``Interrupted`` once, while armed.

    After the first signal, or once ``disarm()`` is called (the stack is
    stopping), further signals are ignored: a second Ctrl+C, or the same
    signal forwarded by ``uv`` and ``just``, cannot cut a stop short.
    SIGHUP (the terminal closed) stops the stack like Ctrl+C. SIGUSR1 only
    sets ``mail`` (``lgos-demo-stack restart`` and ``sync-models`` send it);
    the caller clears it before reading the mailbox.
    """

    def __init__(self) -> None:
        self.armed = True
        self.mail = False
        self._previous: dict[int, Any] = {}

    def disarm(self) -> None:
        self.armed = False

    def __enter__(self) -> StopSignals:
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            self._previous[number] = signal.signal(number, self._handle)
        self._previous[signal.SIGUSR1] = signal.signal(signal.SIGUSR1, self._mail)
        return self

    def __exit__(self, *exc: object) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)

    def _mail(self, number: int, frame: FrameType | None) -> None:
        self.mail = True

    def _handle(self, number: int, frame: FrameType | None) -> None:
        if self.armed:
            self.armed = False
            raise Interrupted(signal.Signals(number).name)
