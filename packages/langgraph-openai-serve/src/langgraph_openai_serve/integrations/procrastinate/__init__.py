"""Deprecated path of ``langgraph_openai_serve.backends.postgres.queue``.

A package rather than a module, so that the old file's history (and edits
made to it on other branches) follows it to its new home. The queue is now
the job queue of ``PostgresBackend`` (``ProcrastinateQueue``); the old name
``ProcrastinateBackend`` resolves to it.
"""

from __future__ import annotations

_RENAMED = {"ProcrastinateBackend": "ProcrastinateQueue"}


def __getattr__(name: str) -> object:
    from langgraph_openai_serve.backends.postgres import queue
    from langgraph_openai_serve.deprecation import warn_renamed

    current = _RENAMED.get(name, name)
    value = getattr(queue, current)  # AttributeError for unknown names
    warn_renamed(f"{__name__}.{name}", f"{queue.__name__}.{current}")
    return value
