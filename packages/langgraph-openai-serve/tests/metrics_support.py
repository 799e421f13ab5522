"""Scraping ``/metrics`` in tests: parse with prometheus-client's own parser
and read samples by name and labels."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample


@dataclass(frozen=True)
class Scrape:
    """One scrape: families by name (counters without ``_total``)."""

    families: dict[str, tuple[str, list[Sample]]]
    """name -> (type, samples)."""

    @classmethod
    def of(cls, text: str) -> Scrape:
        return cls(
            {
                family.name: (family.type, list(family.samples))
                for family in text_string_to_metric_families(text)
            }
        )

    def value(self, sample: str, **labels: str) -> float:
        """The sum of ``sample``'s series whose labels include ``labels``
        (0 when there is none)."""
        total = 0.0
        for _, samples in self.families.values():
            for candidate in samples:
                if (
                    candidate.name == sample
                    and labels.items() <= candidate.labels.items()
                ):
                    total += candidate.value
        return total

    def label_names(self, family: str) -> set[frozenset[str]]:
        """The label names each series of ``family`` carries (without ``le``)."""
        _, samples = self.families[family]
        return {frozenset(s.labels) - {"le"} for s in samples}

    def type_of(self, family: str) -> str:
        return self.families[family][0]

    @property
    def series(self) -> int:
        return sum(len(samples) for _, samples in self.families.values())


def scrape(url: str) -> Scrape:
    response = httpx.get(url, timeout=10)
    response.raise_for_status()
    assert response.headers["content-type"].startswith("text/plain")
    return Scrape.of(response.text)
