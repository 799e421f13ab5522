"""One page of an ordered list of items: a Conversation's, or the input
items of a kept Response.

Pages follow OpenAI's cursor rules: ``order`` ``asc`` is the order the items
came in, ``desc`` the newest first, ``after`` names the item the page
follows and ``before`` the one it precedes.
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


class CursorNotFound(LookupError):
    """A paging cursor names no item of the list."""

    param = ""

    def __init__(self, item_id: str) -> None:
        super().__init__(item_id)
        self.item_id = item_id


class AfterItemNotFound(CursorNotFound):
    """``after`` names no item of the list."""

    param = "after"


class BeforeItemNotFound(CursorNotFound):
    """``before`` names no item of the list."""

    param = "before"


def page_of(
    items: Sequence[dict[str, Any]],
    *,
    limit: int,
    order: Order,
    after: str | None,
    before: str | None = None,
) -> ItemPage:
    """The page of ``items`` (oldest first) that ``limit``, ``order`` and the
    cursors select.

    In ``order``, the page holds items after ``after`` and before
    ``before``: the first ``limit`` of them, or, with ``before`` alone, the
    last ``limit`` (the page preceding ``before``, so a client pages back
    with the ``first_id`` it was given). ``has_more`` says whether more
    items lie beyond the page in the direction it was taken.

    Raises:
        AfterItemNotFound: no item has the id ``after``.
        BeforeItemNotFound: no item has the id ``before``.
    """
    ordered = list(items) if order == "asc" else list(reversed(items))
    ids = [item["id"] for item in ordered] if after or before else []
    start, end = 0, len(ordered)
    if after is not None:
        if after not in ids:
            raise AfterItemNotFound(after)
        start = ids.index(after) + 1
    if before is not None:
        if before not in ids:
            raise BeforeItemNotFound(before)
        end = ids.index(before)
    window = ordered[start:end]
    if before is not None and after is None:
        return ItemPage(window[-limit:], len(window) > limit)
    return ItemPage(window[:limit], len(window) > limit)
