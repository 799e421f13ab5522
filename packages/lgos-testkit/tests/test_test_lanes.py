"""scripts/test-lanes.sh: the members' suites in lanes side by side.

Real pytest runs small suites made here; the ``uv`` the script calls is a
shim that runs them with this interpreter (``uv run --frozen pytest ...``
becomes ``python -m pytest ...``), so no workspace sync is involved.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

LANES_SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "test-lanes.sh"

# A suite that marks its start, waits for another suite's mark, then ends:
# it can only pass while that other suite runs at the same time.
MEETS = """
import pathlib, time

def test_meets_{name}():
    marks = pathlib.Path({marks!r})
    (marks / "{name}").touch()
    deadline = time.monotonic() + 120  # a bound on failure, not a pace
    while not (marks / "{other}").exists():
        assert time.monotonic() < deadline, "{other} never ran beside {name}"
        time.sleep(0.05)
"""

# A suite that appends its start and end to a shared journal.
JOURNALS = """
import pathlib

def test_journals_{name}():
    journal = pathlib.Path({journal!r})
    with journal.open("a") as out:
        out.write("start {name}\\n")
    with journal.open("a") as out:
        out.write("end {name}\\n")
"""

FAILS = """
def test_fails_{name}():
    assert "expected" == "what {name} got"
"""


def _suite(root: Path, name: str, source: str, **fields: str) -> None:
    tests = root / name / "tests"
    tests.mkdir(parents=True)
    (tests / f"test_{name}.py").write_text(
        textwrap.dedent(source.format(name=name, **fields))
    )


@pytest.fixture
def run_lanes(tmp_path: Path):
    shim = tmp_path / "uv-shim"
    shim.write_text(
        f'#!/bin/sh\nshift 2\nexec "{sys.executable}" -m "$@" -p no:cacheprovider\n'
    )
    shim.chmod(0o755)

    def run(*lanes: str, one_lane: bool = False) -> subprocess.CompletedProcess[str]:
        # The workspace's plugins are not needed by these suites (and cost
        # seconds at every start).
        env = {**os.environ, "UV": str(shim), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
        env.pop("LGOS_TEST_LANES", None)
        env.pop("PYTEST_ADDOPTS", None)
        if one_lane:
            env["LGOS_TEST_LANES"] = "1"
        return subprocess.run(
            ["bash", str(LANES_SCRIPT), *lanes],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    return run


def test_lanes_run_their_suites_at_the_same_time(tmp_path, run_lanes):
    marks = tmp_path / "marks"
    marks.mkdir()
    _suite(tmp_path, "alpha", MEETS, marks=str(marks), other="beta")
    _suite(tmp_path, "beta", MEETS, marks=str(marks), other="alpha")

    result = run_lanes("alpha", "beta")

    assert result.returncode == 0, result.stdout + result.stderr
    assert "-- lane 1: alpha passed" in result.stdout
    assert "-- lane 2: beta passed" in result.stdout


def test_each_lanes_output_is_printed_whole_and_in_lane_order(tmp_path, run_lanes):
    marks = tmp_path / "marks"
    marks.mkdir()
    _suite(tmp_path, "alpha", MEETS, marks=str(marks), other="beta")
    _suite(tmp_path, "beta", MEETS, marks=str(marks), other="alpha")

    out = run_lanes("alpha", "beta").stdout

    alpha, beta = out.index("== tests: alpha"), out.index("== tests: beta")
    assert alpha < beta
    # alpha's whole pytest report sits between its header and beta's.
    assert "1 passed" in out[alpha:beta]
    assert "1 passed" in out[beta:]


def test_a_failed_suite_fails_the_run_after_every_suite_has_run(tmp_path, run_lanes):
    journal = tmp_path / "journal"
    _suite(tmp_path, "broken", FAILS)
    _suite(tmp_path, "after", JOURNALS, journal=str(journal))
    _suite(tmp_path, "beside", JOURNALS, journal=str(journal))

    result = run_lanes("broken after", "beside")

    assert result.returncode == 1
    assert "-- lane 1: broken FAILED" in result.stdout
    assert "-- lane 1: after passed" in result.stdout
    assert "-- lane 2: beside passed" in result.stdout
    assert "what broken got" in result.stdout  # pytest's own report of it
    assert sorted(journal.read_text().split("\n")[:-1]) == [
        "end after",
        "end beside",
        "start after",
        "start beside",
    ]


def test_one_lane_runs_every_suite_in_the_order_given(tmp_path, run_lanes):
    journal = tmp_path / "journal"
    for name in ("first", "second", "third"):
        _suite(tmp_path, name, JOURNALS, journal=str(journal))

    result = run_lanes("first second", "third", one_lane=True)

    assert result.returncode == 0, result.stdout + result.stderr
    assert journal.read_text().split() == [
        word
        for name in ("first", "second", "third")
        for word in ("start", name, "end", name)
    ]
    assert "-- lane 1: third passed" in result.stdout
    assert "lane 2" not in result.stdout
