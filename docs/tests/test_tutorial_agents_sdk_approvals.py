"""The Agents SDK tutorial's approvals: the hosted-MCP approval callback
answers a graph presenting interrupts as MCP approvals."""

from __future__ import annotations

import asyncio

import gate_agent
from conftest import expected_output


def test_the_approval_callback_approves_and_rejects_a_paused_refund(serve, capsys):
    server = serve("gate_app")

    asyncio.run(gate_agent.main(server.base_url))

    assert capsys.readouterr().out == expected_output("gate_agent.out")
