"""Kept and background Responses, apart from the wire: their store's
contract (``protocol``), errors, retention and what their runs share
(``runtime``). Running a background Response, and everything OpenAI-shaped
about it, is the Responses surface's (``openai/responses/background/``); the
stores are the backends' (``backends/``).
"""
