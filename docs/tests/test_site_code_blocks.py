"""Keeps the site honest: every Python block on a page is a tested sample.

A ```python block must consist of snippet includes (``--8<-- "x.py"``) of
files in docs/samples that a test in docs/tests imports or serves; there
is no way to opt out. Every sample is on some page.
"""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
SAMPLES = DOCS / "samples"
TESTS = DOCS / "tests"
FENCE = re.compile(
    r"^(?P<indent> *)```(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=indent)```", re.M | re.S
)
INCLUDE = re.compile(r'^--8<-- "(?P<path>[^"]+)"$')


def pages() -> list[Path]:
    return [
        page
        for page in DOCS.rglob("*.md")
        if SAMPLES not in page.parents and TESTS not in page.parents
    ]


def python_blocks() -> list[tuple[Path, str, str]]:
    found = []
    for page in pages():
        for fence in FENCE.finditer(page.read_text()):
            language = fence["info"].strip().split(" ")[0].lower()
            if language in {"python", "py", "pycon"}:
                found.append((page, fence["info"], fence["body"]))
    return found


def sources_of_tests() -> str:
    return "\n".join(test.read_text() for test in TESTS.glob("*.py"))


def test_every_python_block_includes_a_tested_sample():
    tests = sources_of_tests()
    problems = []
    blocks = python_blocks()
    for page, _info, body in blocks:
        lines = [line.strip() for line in body.strip().splitlines()]
        for line in lines:
            match = INCLUDE.match(line)
            if match is None:
                problems.append(f"{page.name}: inline Python: {line!r}")
                continue
            sample = SAMPLES / match["path"].split(":")[0]
            if not sample.is_file():
                problems.append(f"{page.name}: no sample {sample.name}")
            elif re.search(rf"\b{re.escape(sample.stem)}\b", tests) is None:
                problems.append(f"{page.name}: {sample.name} is run by no test")
    assert blocks, "the site shows no Python at all"
    assert problems == []


def test_every_sample_is_shown_on_a_page():
    shown = "\n".join(page.read_text() for page in pages())
    unused = [
        sample.name
        for sample in SAMPLES.iterdir()
        if sample.suffix in {".py", ".out"} and f'"{sample.name}' not in shown
    ]
    assert unused == []
