"""The chat model every demo graph uses: ``ChatOpenAI`` on a configurable URL.

``DEMO_MODEL_BASE_URL`` / ``DEMO_MODEL_API_KEY`` / ``DEMO_MODEL_NAME`` point it
at the offline demo model (the default) or at any OpenAI-compatible provider.
It always speaks Chat Completions (``use_responses_api=False``), which every
such provider offers, and asks for usage on streams (``stream_usage=True``).
"""

from __future__ import annotations

from langchain_openai import ChatOpenAI

from lgos_demos.settings import DemoSettings


def demo_chat_model(settings: DemoSettings) -> ChatOpenAI:
    return ChatOpenAI(
        model=settings.MODEL_NAME,
        base_url=settings.MODEL_BASE_URL,
        api_key=settings.MODEL_API_KEY,
        stream_usage=True,
        use_responses_api=False,
        max_retries=1,
        timeout=120,
    )
