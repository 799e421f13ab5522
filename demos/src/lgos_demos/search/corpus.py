"""The offline search corpus: bundled Markdown documents, ranked by BM25.

The documents are snapshots of the repository's READMEs, shipped as package
data in ``corpus/`` (refresh them by copying the READMEs again). Each is split
into sections at its headings; a section is one search result, addressed as
``/docs/{document}#{heading-anchor}`` on the search service itself, so every
cited URL opens offline.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources

from lgos_demos.words import STOPWORDS, tokens

SNIPPET_LIMIT = 300
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|\*|`)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
# BM25 parameters; headings count twice as much as body text.
_K1, _B, _HEADING_WEIGHT = 1.2, 0.75, 2


@dataclass(frozen=True, slots=True)
class Section:
    """One heading's part of a document."""

    document: str
    document_title: str
    heading: str
    anchor: str
    plain: str
    terms: Counter[str]
    length: int

    @property
    def title(self) -> str:
        if self.heading == self.document_title:
            return self.document_title
        return f"{self.heading} — {self.document_title}"

    def path(self) -> str:
        """The section's address below the service's base URL."""
        if not self.anchor:
            return f"/docs/{self.document}"
        return f"/docs/{self.document}#{self.anchor}"


@dataclass(frozen=True, slots=True)
class Hit:
    section: Section
    score: float
    snippet: str


class Corpus:
    """Documents (``slug -> Markdown``) indexed section by section."""

    def __init__(self, documents: Mapping[str, str]) -> None:
        self.documents = dict(documents)
        self.sections = [
            s for slug, text in self.documents.items() for s in _split(slug, text)
        ]
        counts: Counter[str] = Counter()
        for section in self.sections:
            counts.update(section.terms.keys())
        total = len(self.sections) or 1
        self._idf = {
            term: math.log(1 + (total - n + 0.5) / (n + 0.5))
            for term, n in counts.items()
        }
        self._average = sum(s.length for s in self.sections) / total or 1.0

    @classmethod
    def bundled(cls) -> Corpus:
        """The documents shipped in ``lgos_demos/search/corpus/``."""
        folder = resources.files("lgos_demos.search").joinpath("corpus")
        documents = {
            entry.name.removesuffix(".md"): entry.read_text(encoding="utf-8")
            for entry in folder.iterdir()
            if entry.name.endswith(".md")
        }
        return cls(dict(sorted(documents.items())))

    def search(self, query: str, limit: int = 8) -> list[Hit]:
        """The best sections for ``query``, best first; none without a match."""
        terms = [t for t in tokens(query) if t not in STOPWORDS] or tokens(query)
        scored: list[tuple[float, int, Section]] = []
        for position, section in enumerate(self.sections):
            score = self._score(section, terms)
            if score > 0:
                scored.append((score, -position, section))
        scored.sort(reverse=True)
        return [
            Hit(
                section=section,
                score=round(score, 4),
                snippet=_snippet(section.plain, terms),
            )
            for score, _, section in scored[:limit]
        ]

    def _score(self, section: Section, terms: list[str]) -> float:
        score = 0.0
        norm = _K1 * (1 - _B + _B * section.length / self._average)
        for term in set(terms):
            frequency = section.terms.get(term, 0)
            if frequency:
                score += (
                    self._idf.get(term, 0.0)
                    * frequency
                    * (_K1 + 1)
                    / (frequency + norm)
                )
        return score


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, no punctuation, ``-`` for spaces."""
    kept = re.sub(r"[^\w\- ]", "", heading.lower())
    return kept.replace(" ", "-")


def _split(slug: str, markdown: str) -> list[Section]:
    parts: list[tuple[str, list[str]]] = [("", [])]
    in_fence = False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        found = None if in_fence else _HEADING.match(line)
        if found:
            parts.append((found.group(2).strip(), []))
        else:
            parts[-1][1].append(line)
    document_title = next((h for h, _ in parts if h), slug)
    sections = []
    for index, (heading, lines) in enumerate(parts):
        body = "\n".join(lines).strip()
        if not body and not heading:
            continue
        title = heading or document_title
        plain = _plain(body)
        counted = Counter(tokens(plain))
        for word in tokens(title) * _HEADING_WEIGHT:
            counted[word] += 1
        sections.append(
            Section(
                document=slug,
                document_title=document_title,
                heading=title,
                anchor="" if index <= 1 and title == document_title else anchor(title),
                plain=plain,
                terms=counted,
                length=sum(counted.values()),
            )
        )
    return sections


def _plain(markdown: str) -> str:
    """Readable text: no code blocks, link targets, emphasis, table rules or
    table headers."""
    lines, in_fence, row_before = [], False, False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            lines.append("")
            continue
        if in_fence:
            continue
        if _TABLE_RULE.match(line):
            if row_before:  # a header row ("variable — default — meaning") says nothing
                lines.pop()
            continue
        text = _EMPHASIS.sub("", _LINK.sub(r"\1", line))
        row_before = text.lstrip().startswith("|")
        if row_before:
            cells = [c.strip() for c in text.strip().strip("|").split("|")]
            text = " — ".join(c for c in cells if c) + "."
        lines.append(text.strip().removeprefix("- ").removeprefix("> "))
    paragraphs = re.split(r"\n\s*\n", "\n".join(lines))
    return "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())


def _snippet(plain: str, terms: list[str]) -> str:
    """The paragraph matching the most terms, from its first matching sentence."""
    wanted = set(terms)
    paragraphs = plain.split("\n\n") or [plain]
    best = max(paragraphs, key=lambda p: len(wanted & set(tokens(p))))
    sentences = _SENTENCE.split(best)
    start = next((i for i, s in enumerate(sentences) if wanted & set(tokens(s))), 0)
    text = " ".join(sentences[start:])
    if len(text) <= SNIPPET_LIMIT:
        return text
    return text[:SNIPPET_LIMIT].rsplit(" ", 1)[0] + "…"
