"""Word handling shared by the offline demo model and the offline search.

Both are deliberately simple: lowercase word tokens, a small stopword list,
and sentence trimming good enough for scripted, readable replies.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9][a-z0-9_\-]*[a-z0-9]|[a-z0-9]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"“(])")
_CLAUSE_END = re.compile(r"[,;:](?=\s)|\s[—–-](?=\s)")
_SHORTEST_CLAUSE = 40
_OPEN_ENDINGS = " ,;:—–-"

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
    """The first sentence of ``text`` as a whole sentence of at most
    ``limit`` characters, ending with punctuation.

    A sentence that is too long, or was already cut (it ends with ``…``), is
    shortened to its whole clauses; only a first clause longer than ``limit``
    is cut between words, and then it ends with ``…``. A sentence that
    introduced a list or code (``…as follows:``) ends with a full stop.
    """
    flat = " ".join(text.split())
    if not flat:
        return ""
    sentence = _SENTENCE_END.split(flat, maxsplit=1)[0]
    was_cut = sentence.endswith("…")
    sentence = sentence.removesuffix("…").rstrip()
    if was_cut or len(sentence) > limit:
        sentence = _whole_clauses(sentence, limit)
    sentence = sentence.rstrip(_OPEN_ENDINGS)
    if sentence and sentence[-1] not in ".!?…":
        sentence += "."
    return sentence


def _whole_clauses(sentence: str, limit: int) -> str:
    """The longest run of whole clauses that fits ``limit``, never cut inside
    brackets; else the words that fit, with ``…``."""
    head = sentence[: limit + 1]
    cuts = [
        match.start()
        for match in _CLAUSE_END.finditer(head)
        if match.start() >= _SHORTEST_CLAUSE and _balanced(head[: match.start()])
    ]
    if cuts:
        return sentence[: cuts[-1]]
    return head[:limit].rsplit(" ", 1)[0].rstrip(_OPEN_ENDINGS) + "…"


def _balanced(text: str) -> bool:
    return text.count("(") == text.count(")") and text.count("[") == text.count("]")
