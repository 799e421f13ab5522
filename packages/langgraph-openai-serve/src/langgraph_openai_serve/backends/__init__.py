"""The persistence seam: ``Backend`` (``protocol``) and its two
implementations, ``memory.MemoryBackend`` and ``postgres.PostgresBackend``
(the ``postgres`` extra). ``backend_for(settings)`` is the one place that
reads which a deployment uses.
"""

from langgraph_openai_serve.backends.choice import backend_for
from langgraph_openai_serve.backends.protocol import Backend

__all__ = ["Backend", "backend_for"]
