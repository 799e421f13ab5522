"""Figures of one scenario on one server, and their ratios to the baseline."""

from __future__ import annotations

from dataclasses import dataclass, field

from lgos_bench.load import LoadResult

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Figure:
    key: str
    label: str
    higher_is_better: bool = False
    stream_only: bool = False
    ratioed: bool = True
    """False for context figures: how busy the rest of the machine was is
    not a cost of the server, and 0/0 on a quiet machine has no ratio."""


FIGURES = (
    Figure("rps", "req/s", higher_is_better=True),
    Figure("p50_ms", "p50 ms"),
    Figure("p95_ms", "p95 ms"),
    Figure("p99_ms", "p99 ms"),
    Figure("ttfb_p50_ms", "TTFB p50 ms"),
    Figure("first_delta_p50_ms", "1st delta p50 ms", stream_only=True),
    Figure("deltas_per_s", "deltas/s", higher_is_better=True, stream_only=True),
    Figure("cpu_ms_per_req", "server CPU ms/req"),
    Figure("server_busy_pct", "server busy %"),
    Figure("load_busy_pct", "load gen busy %"),
    Figure("other_busy_pct", "other procs busy %", ratioed=False),
    Figure("rss_before_mib", "RSS before MiB"),
    Figure("rss_after_mib", "RSS after MiB"),
)
FIGURE_KEYS = tuple(figure.key for figure in FIGURES)

Figures = dict[str, float | None]


@dataclass
class Measured:
    """What one scenario on one server produced, over one or more rounds."""

    result: LoadResult = field(default_factory=LoadResult)
    server_cpu: float = 0.0
    load_cpu: float = 0.0
    machine_cpu: float = 0.0
    rss_before: int | None = None
    rss_after: int = 0

    def add(
        self,
        result: LoadResult,
        server_cpu: float,
        load_cpu: float,
        machine_cpu: float,
        rss: tuple[int, int],
    ) -> None:
        self.result.samples += result.samples
        self.result.errors += result.errors
        self.result.elapsed += result.elapsed
        self.server_cpu += server_cpu
        self.load_cpu += load_cpu
        self.machine_cpu += machine_cpu
        if self.rss_before is None:
            self.rss_before = rss[0]
        self.rss_after = rss[1]


def percentile(values: list[float], q: float) -> float | None:
    """Linear-interpolated ``q`` percentile (0-100), ``None`` when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _ms(value: float | None) -> float | None:
    return None if value is None else value * 1000


def summarize(measured: Measured, *, stream: bool) -> Figures:
    """The figures of one measured scenario."""
    result = measured.result
    samples = result.samples
    count = len(samples)
    latencies = [s.latency for s in samples]
    first = [s.first_delta for s in samples if s.first_delta is not None]
    deltas = sum(s.deltas for s in samples)
    elapsed = result.elapsed or 1e-9
    other = max(0.0, measured.machine_cpu - measured.server_cpu - measured.load_cpu)
    return {
        "requests": float(count),
        "errors": float(len(result.errors)),
        "seconds": result.elapsed,
        "rps": count / elapsed,
        "p50_ms": _ms(percentile(latencies, 50)),
        "p95_ms": _ms(percentile(latencies, 95)),
        "p99_ms": _ms(percentile(latencies, 99)),
        "ttfb_p50_ms": _ms(percentile([s.ttfb for s in samples], 50)),
        "first_delta_p50_ms": _ms(percentile(first, 50)) if stream else None,
        "first_delta_p95_ms": _ms(percentile(first, 95)) if stream else None,
        "deltas_per_req": deltas / count if stream and count else None,
        "deltas_per_s": deltas / elapsed if stream else None,
        "cpu_ms_per_req": measured.server_cpu * 1000 / count if count else None,
        "server_busy_pct": 100 * measured.server_cpu / elapsed,
        "load_busy_pct": 100 * measured.load_cpu / elapsed,
        "other_busy_pct": 100 * other / elapsed,
        "rss_before_mib": (measured.rss_before or 0) / MIB,
        "rss_after_mib": measured.rss_after / MIB,
    }


def ratio(value: float | None, base: float | None) -> float | None:
    if value is None or base is None or base == 0:
        return None
    return value / base


def ratios(figures: Figures, baseline: Figures) -> Figures:
    """``figures / baseline`` for every figure (``None`` where undefined)."""
    return {
        figure.key: ratio(figures.get(figure.key), baseline.get(figure.key))
        if figure.ratioed
        else None
        for figure in FIGURES
    }
