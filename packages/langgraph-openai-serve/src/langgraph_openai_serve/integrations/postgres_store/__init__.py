"""Deprecated path of ``langgraph_openai_serve.backends.postgres.responses``.

A package rather than a module, so that the old file's history (and edits
made to it on other branches) follows it to its new home. The store is now
one of ``PostgresBackend``'s, on the backend's pool.
"""

from __future__ import annotations


def __getattr__(name: str) -> object:
    from langgraph_openai_serve.backends.postgres import responses
    from langgraph_openai_serve.deprecation import warn_renamed

    value = getattr(responses, name)  # AttributeError for unknown names
    warn_renamed(f"{__name__}.{name}", f"{responses.__name__}.{name}")
    return value
