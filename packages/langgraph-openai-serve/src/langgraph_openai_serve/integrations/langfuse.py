"""Langfuse tracing (``pip install "langgraph-openai-serve[tracing]"``).

``LGOS_ENABLE_LANGFUSE=true`` makes the server check at startup that the
``langfuse`` package and its keys are present, then add one process-wide
``CallbackHandler`` to every graph run. Langfuse reads its own configuration
(``LANGFUSE_PUBLIC_KEY``, ``LANGFUSE_SECRET_KEY``, optional
``LANGFUSE_BASE_URL``) from the environment.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from typing import Any

from langgraph_openai_serve.graph.errors import GraphConfigurationError

_REQUIRED_ENV = ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY")
_handler: Any = None
_lock = threading.Lock()


def require_langfuse() -> None:
    """Fail now, with a clear message, if Langfuse tracing cannot work.

    Raises:
        GraphConfigurationError: the package or a required key is missing.
    """
    if importlib.util.find_spec("langfuse") is None:
        raise GraphConfigurationError(
            "LGOS_ENABLE_LANGFUSE is set but the 'langfuse' package is not "
            'installed; install "langgraph-openai-serve[tracing]".'
        )
    missing = [name for name in _REQUIRED_ENV if not os.environ.get(name)]
    if missing:
        raise GraphConfigurationError(
            "LGOS_ENABLE_LANGFUSE is set but "
            + " and ".join(missing)
            + " "
            + ("is" if len(missing) == 1 else "are")
            + " not set."
        )


def get_langfuse_callback() -> Any:
    """The process-wide Langfuse LangChain callback handler, built once."""
    global _handler
    if _handler is None:
        with _lock:
            if _handler is None:
                require_langfuse()
                from langfuse.langchain import CallbackHandler

                _handler = CallbackHandler()
    return _handler


def langfuse_callbacks() -> tuple[Any, ...]:
    """The run callbacks of a traced server: the process-wide handler."""
    return (get_langfuse_callback(),)
