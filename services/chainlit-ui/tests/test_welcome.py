"""The first screen's choices: the default graph, a new chat's server tools
and each profile's welcome text."""

from __future__ import annotations

from lgos_chainlit.catalog import LIMITED_NOTICE, GraphInfo
from lgos_chainlit.welcome import default_graph, guide, new_chat, profile_markdown

SIMPLE = GraphInfo(model="lgos/simple", description="One model call.")
CITATIONS = GraphInfo(model="lgos/citations", description="Cites the docs.")
WEB = GraphInfo(
    model="lgos/web-search", description="Searches.", server_tools=("web_search",)
)
GRAPHS = [SIMPLE, CITATIONS, WEB]


def test_the_default_graph_matches_a_name_or_its_last_segment():
    assert default_graph(GRAPHS, "citations") is CITATIONS
    assert default_graph(GRAPHS, "lgos/web-search") is WEB


def test_without_the_preferred_graph_the_first_listed_is_the_default():
    assert default_graph(GRAPHS, "missing") is SIMPLE
    assert default_graph([], "citations") is None


def test_a_new_chat_starts_with_the_graphs_server_tools_switched_on():
    assert new_chat("t1", WEB).tools == ["web_search"]
    assert new_chat("t2", SIMPLE).tools == []
    limited = GraphInfo(model="x", server_tools=("web_search",), limited=True)
    assert new_chat("t3", limited).tools == []


def test_a_profile_names_its_graph_what_to_try_and_the_other_graphs():
    text = profile_markdown(CITATIONS, GRAPHS)

    assert text.startswith("### lgos/citations\n\nCites the docs.")
    assert f"**Try it:** {guide(CITATIONS).hint}" in text
    assert "**lgos/simple**, **lgos/web-search**" in text
    assert "**lgos/citations**" not in text


def test_demo_graphs_have_prompts_to_try_and_others_none():
    assert "How are files stored?" in guide(CITATIONS).prompts
    assert guide(GraphInfo(model="mine")).prompts == ()


def test_a_limited_graph_says_so_on_its_welcome_screen():
    text = profile_markdown(GraphInfo(model="x", limited=True), [])

    assert LIMITED_NOTICE in text
    assert "Other graphs" not in text
