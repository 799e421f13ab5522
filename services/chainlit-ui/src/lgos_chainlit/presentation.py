"""Text the UI shows around an answer: sources, usage, status marks.

Pure functions of UI events, so the wording is tested without a browser.
Graph-provided strings (titles, URLs) are escaped for Markdown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from lgos_chainlit.events import CitationAdded, TurnFinished

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~])")
STILL_ANSWERING = (
    "The answer to the last message is still coming: wait for it, or stop it."
)
"""Said to a message sent from a reloaded page while the chat's turn runs."""
INCOMPLETE_REASONS = {
    "max_output_tokens": "the answer hit its length limit",
    "content_filter": "a content filter stopped the answer",
}


def escape_markdown(text: str) -> str:
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def _safe_url(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def sources_markdown(citations: Iterable[CitationAdded]) -> str:
    """A numbered list of distinct cited sources (http(s) links only)."""
    seen: dict[str, str] = {}
    for citation in citations:
        if _safe_url(citation.url) and citation.url not in seen:
            seen[citation.url] = citation.title or urlsplit(citation.url).netloc
    if not seen:
        return ""
    lines = [
        f"{number}. [{escape_markdown(title)}](<{url.replace('>', '%3E')}>)"
        for number, (url, title) in enumerate(seen.items(), start=1)
    ]
    return "**Sources**\n" + "\n".join(lines)


def usage_text(finished: TurnFinished) -> str:
    """``12 in · 7 out tokens``, or empty when the graph reported no usage."""
    if finished.input_tokens is None or finished.output_tokens is None:
        return ""
    return f"{finished.input_tokens} in · {finished.output_tokens} out tokens"


def status_text(finished: TurnFinished) -> str:
    """A short mark for answers that did not complete normally."""
    if finished.status == "incomplete":
        reason = finished.incomplete_reason or "unknown reason"
        return f"Incomplete answer: {INCOMPLETE_REASONS.get(reason, reason)}."
    if finished.status == "failed":
        return f"The graph failed: {finished.error or 'no details'}."
    if finished.status == "cancelled":
        return "The background run was cancelled; the conversation is unchanged."
    return ""


BACKGROUND_ENDINGS = {
    "completed": "Background run finished.",
    "incomplete": "Background run ended early.",
    "failed": "Background run failed.",
    "cancelled": "Background run cancelled.",
}


def running_line(*, picked_up: bool) -> str:
    """The line shown (with a Cancel button) while a background run goes;
    it names no id: a person has no use for one."""
    if picked_up:
        return "*Following the background run again…*"
    return "*Running in the background…*"


def ended_line(status: str) -> str:
    """What the running line becomes when the run ends."""
    return f"*{BACKGROUND_ENDINGS.get(status, 'Background run ended.')}*"


def refusal_prefix() -> str:
    return "**Refused:** "
