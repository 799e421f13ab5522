"""The graph layer speaks only LangGraph: how a pause is named and shown on
the Responses wire lives in ``openai/responses/``."""

from __future__ import annotations

from pathlib import Path

import langgraph_openai_serve.graph
import pytest

GRAPH_DIR = Path(langgraph_openai_serve.graph.__file__).parent
# GraphConfig names the presentation a graph wants (``interrupt_protocol``),
# so the protocol names themselves may appear; their shapes may not.
WIRE_WORDS = ("resp_lg", "call_lg", "mcpr_lg", "lgos_interrupt", "fastapi")


@pytest.mark.parametrize("module", sorted(GRAPH_DIR.glob("*.py")), ids=lambda p: p.name)
def test_graph_modules_carry_no_responses_vocabulary(module: Path):
    source = module.read_text()

    assert "langgraph_openai_serve.openai" not in source
    assert [word for word in WIRE_WORDS if word in source] == []
