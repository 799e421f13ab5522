"""Deprecated path of ``langgraph_openai_serve.background.postgres.store``.

A package rather than a module, so that the old file's history (and edits
made to it on other branches) follows it to its new home.
"""

from __future__ import annotations


def __getattr__(name: str) -> object:
    from langgraph_openai_serve.background.postgres import store
    from langgraph_openai_serve.deprecation import warn_renamed

    value = getattr(store, name)  # AttributeError for unknown names
    warn_renamed(f"{__name__}.{name}", f"{store.__name__}.{name}")
    return value
