"""Errors of the Batch API, mapped to envelopes in ``openai/errors.py``."""

from __future__ import annotations

from langgraph_openai_serve.graph.errors import LGOSError


class BatchNotFoundError(LGOSError, LookupError):
    """Unknown batches and other tenants' batches share this answer."""

    def __init__(self, batch_id: str) -> None:
        super().__init__(f"No batch found with id '{batch_id}'.")
        self.batch_id = batch_id
