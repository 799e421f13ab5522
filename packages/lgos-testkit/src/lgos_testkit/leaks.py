"""Checks that a block of async code ends every stream it reads.

Client code reads streamed HTTP bodies through chains of async generators
(its own, the OpenAI SDK's, httpx's). A generator left suspended when the
code that iterated it is done is finalized later by the garbage collector,
from another task or after the event loop closed, where closing it fails
("async generator already executing") and its connection stays open
meanwhile. ``no_async_generator_left`` makes that visible at once instead of
in whichever later test the collector happens to run.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import sys
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import Any

CLIENT_PACKAGES = frozenset({"openai", "httpx", "httpx2", "httpcore"})
"""The HTTP client libraries whose generators a stream reader must end."""


def _suspended(loop: asyncio.AbstractEventLoop, packages: Collection[str]) -> list[Any]:
    # The generators first iterated on this loop (asyncio keeps them for its
    # shutdown): not those of a server thread serving the test in-process.
    generators = getattr(loop, "_asyncgens", None)
    candidates = list(generators) if generators is not None else gc.get_objects()
    found = []
    for obj in candidates:
        if not inspect.isasyncgen(obj) or obj.ag_frame is None:
            continue
        module = str(obj.ag_frame.f_globals.get("__name__", ""))
        if module.split(".")[0] in packages:
            found.append(obj)
    return found


@contextmanager
def no_async_generator_left(packages: Collection[str] = ()) -> Iterator[None]:
    """Fail when the block leaves unfinished an async generator of
    ``packages`` (besides ``CLIENT_PACKAGES``) that it created on the running
    event loop, or when collecting the garbage it left reports an error.

    Use inside a running event loop. The collector is paused during the
    block, so a left-over reference cycle is found every time, not only when
    no collection happened to run.
    """
    watched = CLIENT_PACKAGES | frozenset(packages)
    loop = asyncio.get_running_loop()
    reported: list[str] = []
    unraisable: list[str] = []
    previous_handler = loop.get_exception_handler()
    previous_hook = sys.unraisablehook
    loop.set_exception_handler(lambda _, context: reported.append(context["message"]))
    sys.unraisablehook = lambda info: unraisable.append(repr(info.exc_value))
    try:
        gc.collect()
        before = {id(obj) for obj in _suspended(loop, watched)}
        gc.disable()
        try:
            yield
            left = sorted(
                g.ag_code.co_qualname
                for g in _suspended(loop, watched)
                if id(g) not in before
            )
        finally:
            gc.enable()
        gc.collect()
        assert left == [], f"async generators left suspended: {left}"
        assert unraisable == [], f"errors while finalizing: {unraisable}"
        assert reported == [], f"errors on the event loop: {reported}"
    finally:
        loop.set_exception_handler(previous_handler)
        sys.unraisablehook = previous_hook
