"""CSV to SVG bar chart."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from lgos_demos.charts import MAX_BARS, ChartError, bar_chart, read_series

SVG = "{http://www.w3.org/2000/svg}"


def test_the_named_numeric_column_is_charted_by_the_text_column():
    data = "\ufeffcity;population;area\nOslo;709000;454\nBergen;289000;465\n".encode()

    series = read_series(data, hint="plot the area please")

    assert series.label_name == "city"
    assert series.value_name == "area"
    assert series.values == (454.0, 465.0)


def test_the_first_numeric_column_is_the_default_and_rows_are_capped():
    rows = "\n".join(f"r{i},{i}" for i in range(MAX_BARS + 5))
    series = read_series(f"name,count\n{rows}\n".encode())

    assert len(series.values) == MAX_BARS
    assert series.truncated


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\xff\xfe\x00", "not UTF-8"),
        (b"only a header\n", "header row"),
        (b"a,b\nx,y\n", "no column holds only numbers"),
    ],
)
def test_unusable_files_say_why(data, reason):
    with pytest.raises(ChartError, match=reason):
        read_series(data)


def test_the_chart_is_valid_svg_with_a_bar_per_value_and_escaped_text():
    series = read_series(b"item,delta\n<a&b>,-2\nc,5.5\n")

    root = ET.fromstring(bar_chart(series, "Deltas & more"))

    assert root.tag == f"{SVG}svg"
    bars = root.findall(f"{SVG}rect")[1:]
    assert len(bars) == 2
    assert all(float(bar.get("height")) > 0 for bar in bars)
    assert root.find(f"{SVG}title").text == "Deltas & more"
    assert "<a&b>" in {t.text for t in root.iter(f"{SVG}text")}
