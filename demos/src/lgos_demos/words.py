"""Word handling shared by the offline demo model and the offline search.

Both are deliberately simple: lowercase word tokens, a small stopword list,
and sentence trimming good enough for scripted, readable replies.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9][a-z0-9_\-]*[a-z0-9]|[a-z0-9]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"“(])")

# One string reads better than 130 quoted words.
STOPWORDS = frozenset(
    """
    a about above after again all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during
    each few for from further had has have having he her here hers him his how i if
    in into is it its itself just let me more most my no nor not now of off on once
    only or other our ours out over own please same she should so some such than
    that the their theirs them then there these they this those through to too
    under until up us very was we were what when where which while who whom why
    will with would you your yours tell show give get make use using want need know
    like
    """.split()  # noqa: SIM905
)


def tokens(text: str) -> list[str]:
    """Lowercase word tokens (letters, digits, inner ``-`` and ``_``)."""
    return _WORD.findall(text.lower())


def content_words(text: str) -> list[str]:
    """Tokens that are not stopwords, in order, without repeats."""
    seen: dict[str, None] = {}
    for word in tokens(text):
        if word not in STOPWORDS:
            seen.setdefault(word, None)
    return list(seen)


def first_sentence(text: str, limit: int = 220) -> str:
    """The first sentence of ``text``, at most ``limit`` characters, ending
    with punctuation."""
    flat = " ".join(text.split())
    sentence = _SENTENCE_END.split(flat, maxsplit=1)[0] if flat else ""
    if len(sentence) > limit:
        cut = sentence[:limit].rsplit(" ", 1)[0].rstrip(",;:-")
        sentence = cut + "…"
    if sentence and sentence[-1] not in ".!?…":
        sentence += "."
    return sentence
