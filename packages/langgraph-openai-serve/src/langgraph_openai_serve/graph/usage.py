"""Token usage reported by the model calls of one graph run."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from langchain_core.tracers.context import register_configure_hook


@dataclass(frozen=True, slots=True)
class Usage:
    """Summed provider-reported token counts; never estimated."""

    input_tokens: int
    output_tokens: int
    total_tokens: int
    cached_input_tokens: int = 0
    reasoning_tokens: int = 0


def _no_token(*_args: Any, **_kwargs: Any) -> None:
    """Nothing to do per token: usage arrives with the model call's end."""


class UsageCollector(BaseCallbackHandler):
    """Sums ``usage_metadata`` over every model call of a run.

    It runs inline (no thread-pool hop per token) and ignores chain, tool and
    retriever events, so its cost per token is one no-op call. It sees
    private ``nostream`` model calls too, which LangGraph's message stream
    skips. A run attaches it with ``counting``, not in its config.
    """

    run_inline = True
    ignore_llm = False
    """A class attribute where the base class has a property: LangChain
    reads it before every token's event."""
    ignore_chain = True
    ignore_agent = True
    ignore_retriever = True
    ignore_chat_model = True
    ignore_custom_event = True
    ignore_retry = True

    on_llm_new_token = staticmethod(_no_token)
    """A function, not a method: LangChain asks of each token's handler
    whether it is a coroutine function, a step shorter for a function."""

    def __init__(self) -> None:
        self._counts = [0, 0, 0, 0, 0]
        self._reported = False

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for generations in response.generations:
            for generation in generations:
                if not isinstance(generation, ChatGeneration):
                    continue
                message = generation.message
                if isinstance(message, AIMessage) and message.usage_metadata:
                    self._add(message.usage_metadata)

    def _add(self, usage: Mapping[str, Any]) -> None:
        counts = self._counts
        counts[0] += usage.get("input_tokens", 0)
        counts[1] += usage.get("output_tokens", 0)
        counts[2] += usage.get("total_tokens", 0)
        counts[3] += (usage.get("input_token_details") or {}).get("cache_read", 0)
        counts[4] += (usage.get("output_token_details") or {}).get("reasoning", 0)
        self._reported = True

    @property
    def total(self) -> Usage | None:
        """The sum so far, or ``None`` when no model call reported usage."""
        if not self._reported:
            return None
        return Usage(*self._counts)


_COUNTING: ContextVar[UsageCollector | None] = ContextVar(
    "lgos_usage_collector", default=None
)
# LangChain gives the collector held here to every callback manager it sets
# up in this context, as a handler of that manager's own, added after the
# handlers it inherits (a chain's, a node's, each model call's). Cheaper than
# a handler in the run's config, which LangGraph merges, copies and filters
# at every level; and placed after LangGraph's stream handler, so a streamed
# model call's check for a streaming handler stops there before testing the
# collector against LangChain's runtime protocol (about 100,000 instructions
# on Python 3.11).
register_configure_hook(_COUNTING, inheritable=False)


@contextlib.contextmanager
def counting(collector: UsageCollector) -> Iterator[None]:
    """``collector`` counts the model calls LangChain starts in this context
    until the block ends, and in the tasks and threads started meanwhile
    (LangGraph's nodes copy the context they start in)."""
    token = _COUNTING.set(collector)
    try:
        yield
    finally:
        # An abandoned run's generator may be closed by the event loop's
        # finalizer, in a context that never held the collector.
        with contextlib.suppress(ValueError):
            _COUNTING.reset(token)


def usage_from_metadata(usage: Mapping[str, Any]) -> Usage:
    """The counts of one LangChain ``UsageMetadata``, read as a run's are."""
    collector = UsageCollector()
    collector._add(usage)
    return Usage(*collector._counts)
