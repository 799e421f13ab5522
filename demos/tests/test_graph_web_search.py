"""``web-search``: the model searches when asked (or forced) and cites results."""

from __future__ import annotations

from demo_support import commentary, drain

SEARCH = [{"type": "web_search"}]


def test_a_search_question_searches_and_cites(api):
    _, response = drain(
        api.responses.create(
            model="web-search",
            input="Search the docs for citations",
            tools=SEARCH,
            stream=True,
        )
    )

    (search,) = [i for i in response.output if i.type == "web_search_call"]
    assert search.action.query == "citations"
    final = response.output[-1]
    assert final.content[0].annotations
    first, last = commentary(response)
    assert first == "Searching the web for “citations”"
    assert last.startswith("Found ")


def test_required_tool_choice_forces_a_search(api):
    response = api.responses.create(
        model="web-search", input="Hello there", tools=SEARCH, tool_choice="required"
    )

    assert [i.type for i in response.output if i.type == "web_search_call"] == [
        "web_search_call"
    ]


def test_without_the_tool_selected_the_model_just_answers(api):
    response = api.responses.create(model="web-search", input="Search for citations")

    assert all(item.type == "message" for item in response.output)
    assert response.output_text.startswith("You said:")
