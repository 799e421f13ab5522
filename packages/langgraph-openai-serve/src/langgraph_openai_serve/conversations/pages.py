"""One page of an ordered list of items: a Conversation's, or the input
items of a kept Response.

Pages follow OpenAI's cursor rules: ``order`` ``asc`` is the order the items
came in, ``desc`` the newest first, and ``after`` names the item the page
follows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

Order = Literal["asc", "desc"]


@dataclass(frozen=True, slots=True)
class ItemPage:
    items: list[dict[str, Any]]
    has_more: bool

    def body(self) -> dict[str, Any]:
        """The OpenAI list object."""
        return {
            "object": "list",
            "data": self.items,
            "first_id": self.items[0]["id"] if self.items else None,
            "last_id": self.items[-1]["id"] if self.items else None,
            "has_more": self.has_more,
        }


class AfterItemNotFound(LookupError):
    """``after`` names no item of the list."""

    def __init__(self, after: str) -> None:
        super().__init__(after)
        self.after = after


def page_of(
    items: Sequence[dict[str, Any]], *, limit: int, order: Order, after: str | None
) -> ItemPage:
    """The page of ``items`` (oldest first) that ``limit``, ``order`` and
    ``after`` select.

    Raises:
        AfterItemNotFound: no item has the id ``after``.
    """
    ordered = list(items) if order == "asc" else list(reversed(items))
    start = 0
    if after is not None:
        ids = [item["id"] for item in ordered]
        if after not in ids:
            raise AfterItemNotFound(after)
        start = ids.index(after) + 1
    return ItemPage(ordered[start : start + limit], start + limit < len(ordered))
