"""Token usage reported by the model calls of one graph run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, LLMResult


@dataclass(frozen=True, slots=True)
class Usage:
    """Summed provider-reported token counts; never estimated."""

    input_tokens: int
    output_tokens: int
    total_tokens: int
    cached_input_tokens: int = 0
    reasoning_tokens: int = 0


class UsageCollector(BaseCallbackHandler):
    """Sums ``usage_metadata`` over every model call of a run.

    It runs inline (no thread-pool hop per token) and ignores chain, tool and
    retriever events, so its cost per token is one no-op method call. It sees
    private ``nostream`` model calls too, which LangGraph's message stream
    skips.
    """

    run_inline = True
    ignore_chain = True
    ignore_agent = True
    ignore_retriever = True
    ignore_chat_model = True
    ignore_custom_event = True
    ignore_retry = True

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


def usage_from_metadata(usage: Mapping[str, Any]) -> Usage:
    """The counts of one LangChain ``UsageMetadata``, read as a run's are."""
    collector = UsageCollector()
    collector._add(usage)
    return Usage(*collector._counts)
