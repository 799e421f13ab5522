"""A CSV table in, an SVG bar chart out; no plotting library needed.

``read_series`` takes the first text column as labels and a numeric column as
values (the one whose header the user named, else the first). ``bar_chart``
draws it as a self-contained SVG document.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from xml.sax.saxutils import escape

from lgos_demos.words import tokens

MAX_BARS = 40
_WIDTH, _HEIGHT = 720, 420
_LEFT, _RIGHT, _TOP, _BOTTOM = 70, 20, 56, 80
_BAR_COLOR = "#4f6bed"


class ChartError(ValueError):
    """The data cannot be drawn as a bar chart; the message says why."""


@dataclass(frozen=True, slots=True)
class Series:
    """Labelled values read from one table."""

    label_name: str
    value_name: str
    labels: tuple[str, ...]
    values: tuple[float, ...]
    truncated: bool = False


def read_series(data: bytes, *, hint: str = "") -> Series:
    """The bar chart's data in a CSV file (comma, semicolon or tab separated).

    Raises:
        ChartError: not text, no rows, or no numeric column.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ChartError("the file is not UTF-8 text, so not a CSV table") from None
    rows = [
        row
        for row in csv.reader(io.StringIO(text), _dialect(text))
        if any(c.strip() for c in row)
    ]
    if len(rows) < 2:
        raise ChartError("the table needs a header row and at least one data row")
    header, body = (
        [h.strip() or f"column {i + 1}" for i, h in enumerate(rows[0])],
        rows[1:],
    )
    width = len(header)
    body = [(row + [""] * width)[:width] for row in body]
    numeric = [
        i for i in range(width) if all(_number(row[i]) is not None for row in body)
    ]
    if not numeric:
        raise ChartError("no column holds only numbers")
    wanted = set(tokens(hint))
    value_column = next(
        (i for i in numeric if wanted & set(tokens(header[i]))), numeric[0]
    )
    label_column = next((i for i in range(width) if i not in numeric), None)
    labels = [
        row[label_column].strip() if label_column is not None else str(n)
        for n, row in enumerate(body, 1)
    ]
    values = [_number(row[value_column]) or 0.0 for row in body]
    return Series(
        label_name=header[label_column] if label_column is not None else "row",
        value_name=header[value_column],
        labels=tuple(labels[:MAX_BARS]),
        values=tuple(values[:MAX_BARS]),
        truncated=len(body) > MAX_BARS,
    )


def bar_chart(series: Series, title: str) -> str:
    """An SVG document drawing ``series`` as vertical bars."""
    low, high = min(0.0, *series.values), max(0.0, *series.values)
    if high == low:
        high = low + 1
    top, bottom = _TOP, _HEIGHT - _BOTTOM

    def y(value: float) -> float:
        return bottom - (value - low) / (high - low) * (bottom - top)

    slot = (_WIDTH - _LEFT - _RIGHT) / len(series.values)
    bar = min(slot * 0.7, 80.0)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" '
        f'height="{_HEIGHT}" viewBox="0 0 {_WIDTH} {_HEIGHT}" '
        'font-family="sans-serif" font-size="12">',
        _element("title", title),
        _element("rect", width=_WIDTH, height=_HEIGHT, fill="#ffffff"),
        _element("text", title, x=_WIDTH / 2, y=28, font_size=18, text_anchor="middle"),
    ]
    for tick in _ticks(low, high):
        parts += [
            _element(
                "line",
                x1=_LEFT,
                x2=_WIDTH - _RIGHT,
                y1=y(tick),
                y2=y(tick),
                stroke="#e3e3e3",
            ),
            _element(
                "text", _format(tick), x=_LEFT - 8, y=y(tick) + 4, text_anchor="end"
            ),
        ]
    pairs = zip(series.labels, series.values, strict=True)
    for index, (label, value) in enumerate(pairs):
        x = _LEFT + index * slot + (slot - bar) / 2
        y_top, height = min(y(value), y(0)), abs(y(value) - y(0))
        centre = x + bar / 2
        hover = _element("title", f"{label}: {_format(value)}")
        parts += [
            _element(
                "rect",
                hover,
                raw=True,
                x=x,
                y=y_top,
                width=bar,
                height=height,
                fill=_BAR_COLOR,
            ),
            _element(
                "text", _format(value), x=centre, y=y_top - 4, text_anchor="middle"
            ),
            _element(
                "text",
                _short(label),
                x=centre,
                y=bottom + 16,
                text_anchor="end",
                transform=f"rotate(-30 {centre:.1f} {bottom + 16})",
            ),
        ]
    caption = f"{series.value_name} by {series.label_name}"
    parts += [
        _element(
            "line", x1=_LEFT, x2=_WIDTH - _RIGHT, y1=y(0), y2=y(0), stroke="#333333"
        ),
        _element("text", caption, x=_LEFT, y=_HEIGHT - 8, fill="#555555"),
        "</svg>",
    ]
    return "\n".join(parts) + "\n"


def _element(
    tag: str, body: str = "", *, raw: bool = False, **attributes: float | str
) -> str:
    """One SVG element; ``font_size`` style names become ``font-size``."""
    rendered = " ".join(
        f'{name.replace("_", "-")}="{_attribute(value)}"'
        for name, value in attributes.items()
    )
    opening = f"<{tag} {rendered}" if rendered else f"<{tag}"
    if not body:
        return opening + "/>"
    content = body if raw else escape(body)
    return f"{opening}>{content}</{tag}>"


def _attribute(value: float | str) -> str:
    if isinstance(value, float):
        return f"{value:.1f}"
    return escape(str(value), {'"': "&quot;"})


def _dialect(text: str) -> type[csv.Dialect] | csv.Dialect:
    try:
        return csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        return csv.excel


def _number(cell: str) -> float | None:
    cleaned = cell.strip().replace("_", "").removesuffix("%").strip()
    if not cleaned:
        return None
    try:
        value = float(cleaned)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    ticks, value = [], first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    return ticks


def _format(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:,.2f}"


def _short(label: str, limit: int = 14) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"
