"""Errors of kept Conversations, mapped to envelopes in ``openai/errors.py``."""

from __future__ import annotations

from langgraph_openai_serve.graph.errors import LGOSError


class ConversationNotFoundError(LGOSError, LookupError):
    """Unknown, deleted and other scopes' Conversations share this answer."""

    def __init__(self, conversation_id: str) -> None:
        super().__init__(f"Conversation with id '{conversation_id}' not found.")
        self.conversation_id = conversation_id


class RequestConversationNotFoundError(ConversationNotFoundError):
    """A Response's ``conversation`` names no Conversation of the caller."""


class ConversationItemNotFoundError(LGOSError, LookupError):
    def __init__(self, conversation_id: str, item_id: str) -> None:
        super().__init__(
            f"Item with id '{item_id}' not found in conversation '{conversation_id}'."
        )
        self.conversation_id = conversation_id
        self.item_id = item_id


class ConversationLockedError(LGOSError):
    """Another turn is running on the Conversation (one turn at a time)."""

    def __init__(self, conversation_id: str) -> None:
        super().__init__(
            "Another process is currently operating on this conversation. "
            "Please retry in a few seconds."
        )
        self.conversation_id = conversation_id
