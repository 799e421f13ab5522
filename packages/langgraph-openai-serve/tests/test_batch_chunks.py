"""How a batch's lines are cut into chunks (``steps.chunk_count``): every
line in one chunk, none over the configured size, and rounds of equal
chunks, so a batch's slots stay busy to its end instead of one short chunk
running alone."""

from __future__ import annotations

import math

import pytest
from langgraph_openai_serve.batches.steps import chunk_count


@pytest.mark.parametrize("concurrency", [1, 2, 4, 7])
@pytest.mark.parametrize("most_lines", [1, 3, 25])
def test_every_line_is_in_one_chunk_of_at_most_the_size(most_lines, concurrency):
    for total in range(1, 400):
        chunks = chunk_count(total, most_lines, concurrency)
        size = math.ceil(total / chunks)
        ranges = [range(c * size, min((c + 1) * size, total)) for c in range(chunks)]

        assert [line for chunk in ranges for line in chunk] == list(range(total))
        assert all(0 < len(chunk) <= most_lines for chunk in ranges), total


def test_a_batch_of_120_lines_runs_in_rounds_that_fill_its_slots():
    # 4 at once, 25 at most: 8 chunks of 15 (two full rounds), not 5 of 25
    # whose last one runs alone for as long as a whole round.
    assert chunk_count(120, 25, 4) == 8
    assert chunk_count(0, 25, 4) == 0
    assert chunk_count(4, 25, 4) == 4  # a small batch's lines side by side
