"""The memory backend: every store and the queue in this process
(``MemoryBackend``)."""

from langgraph_openai_serve.backends.memory.backend import MemoryBackend

__all__ = ["MemoryBackend"]
