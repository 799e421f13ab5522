"""``lgos-bench growth`` end to end on tiny sizes: both databases built by
SQL on a real PostgreSQL, every operation timed on each, then the real
``lgos responses-cleanup`` beside submits.

No timing figure is asserted (a loaded CI machine's mean nothing): what must
hold is that every operation ran on both databases as often as asked, the
sweep deleted every generated (expired) Response and nothing else, and the
report is written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

RESPONSES = 400
TRIES = 3


def test_every_operation_is_timed_on_both_databases_and_the_sweep_runs(
    tmp_path: Path,
) -> None:
    command = [sys.executable, "-m", "lgos_bench", "growth"]
    command += ["--responses", str(RESPONSES), "--conversations", "4"]
    command += ["--jobs", "64", "--batches", "40", "--tries", str(TRIES)]
    command += ["--steady", "1", "--out", str(tmp_path)]
    subprocess.run(command, check=True, env=os.environ, timeout=240)

    (data,) = tmp_path.glob("*-growth.json")
    (markdown,) = tmp_path.glob("*-growth.md")
    results = json.loads(data.read_text())
    operations = results["operations"]
    assert len(operations) == 12
    for row in operations:
        assert row["tries"] == TRIES, row["operation"]
        assert row["empty_median_ms"] > 0
        assert row["grown_median_ms"] > 0
    assert results["tables"]["grown"]["lgos_conversation_items"]["rows"] >= 800
    swept = results["sweep"]
    assert swept["deleted"] == RESPONSES
    assert swept["before"]["fresh"]["count"] > 0
    assert swept["during"]["fresh"]["count"] > 0
    text = markdown.read_text()
    assert "| worker's take |" in text
    assert "## The retention sweep beside submits" in text
