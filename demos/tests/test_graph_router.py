"""``router``: the private planner never streams; only the answer does."""

from __future__ import annotations

from demo_support import answer_text, commentary, deltas, drain


def test_small_talk_goes_straight_to_a_streamed_answer(api):
    events, final = drain(
        api.responses.create(model="router", input="Hello there!", stream=True)
    )

    text = deltas(events, final)
    assert text == answer_text(final)
    assert text.startswith("You said: “Hello there!”")
    assert "route" not in text
    assert "{" not in text
    assert commentary(final) == []
    assert final.usage.input_tokens > 0


def test_docs_questions_are_searched_and_cited(api):
    events, final = drain(
        api.responses.create(
            model="router",
            input="How do I configure the Files API settings?",
            stream=True,
        )
    )

    assert deltas(events, final) == answer_text(final)
    assert answer_text(final).startswith("Here is what I found.")
    assert final.output[-1].content[0].annotations
    assert commentary(final)[0].startswith("Searching the docs for")


def test_chat_completions_stream_only_the_answer(api):
    stream = api.chat.completions.create(
        model="router", messages=[{"role": "user", "content": "Thanks!"}], stream=True
    )

    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text.startswith("You said: “Thanks!”")
