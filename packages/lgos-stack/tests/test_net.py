"""Waiting on progress: slow but moving passes, stuck fails naming how far."""

from __future__ import annotations

import itertools
import socket

import pytest
from lgos_stack.net import LOOPBACK, ephemeral_range, free_ports, wait_while_progressing


def test_a_count_that_keeps_rising_is_waited_for_until_it_reaches_its_target():
    counts = itertools.count(1)
    seen: list[int] = []

    def progress() -> int:
        seen.append(next(counts))
        return seen[-1]

    wait_while_progressing(progress, 5, stall=30, what="the runs", interval=0)

    assert seen[-1] == 5


def test_a_count_that_stops_rising_fails_naming_what_and_how_far():
    with pytest.raises(
        TimeoutError, match=r"no progress for 0.2 s waiting for the runs \(2/5\)"
    ):
        wait_while_progressing(lambda: 2, 5, stall=0.2, what="the runs")


def test_free_ports_are_distinct_bindable_and_outside_the_ephemeral_range():
    # A port in the ephemeral range can become the local end of any outgoing
    # connection before the server binds it (a stack start failed that way).
    low, high = ephemeral_range()
    ports = free_ports(30)

    assert len(set(ports)) == 30
    assert [port for port in ports if low <= port <= high] == []
    for port in ports:
        with socket.socket() as server:
            server.bind((LOOPBACK, port))
