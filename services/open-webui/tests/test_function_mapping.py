"""The Function's pure parts on their own: the pause kept in a message,
Open WebUI's history as Responses input, dialogs and settings."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="module")
def fn(function_module):
    return function_module


def test_a_pause_written_into_a_message_is_found_again_and_hidden(fn):
    call = {"type": "function_call", "call_id": "call_1", "name": "lgos_interrupt"}
    call["arguments"] = json.dumps({"question": "Why?"})
    pending = fn.PendingInterrupt("resp_1", (call,))
    text = "Let me ask." + fn.pending_marker(pending) + f"\n\n*{fn.WAITING}*\n"

    markers = fn.read_markers(text)

    assert markers.pending == pending
    assert markers.visible == "Let me ask."


def test_a_resumed_pause_is_no_longer_pending(fn):
    pending = fn.PendingInterrupt("resp_1", ({"call_id": "c"},))
    text = fn.pending_marker(pending) + fn.resumed_marker("resp_1") + "Done."

    assert fn.read_markers(text) == fn.Markers("Done.")


def test_the_response_a_turn_ended_with_is_read_back_from_its_message(fn):
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello." + fn.response_marker("resp_a")},
        {"role": "user", "content": "Again"},
        {"role": "assistant", "content": "Again." + fn.response_marker("resp_b")},
        {"role": "user", "content": "Third"},
    ]

    chained = fn.read_conversation(messages)
    # Regenerating the second answer: its turn is chained to the first's.
    regenerated = fn.read_conversation(messages[:3])

    assert chained.chained == "resp_b"
    assert [item.get("content") for item in chained.history][-1] == "Again."
    assert regenerated.chained == "resp_a"
    assert fn.read_conversation(messages[:1]).chained is None


def test_history_becomes_input_items_and_only_the_last_pause_counts(fn):
    pending = fn.PendingInterrupt("resp_1", ({"call_id": "c"},))
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
        {"role": "assistant", "content": "Asked." + fn.pending_marker(pending)},
        {"role": "user", "content": "never mind"},
        {"role": "assistant", "content": "OK."},
        {"role": "user", "content": "Next"},
    ]

    conversation = fn.read_conversation(messages)

    assert conversation.pending is None
    assert conversation.user_text == "Next"
    assert conversation.history == [
        {"role": "system", "content": "Be brief."},
        fn.user_item("Hi"),
        {"role": "assistant", "content": "Asked."},
        fn.user_item("never mind"),
        {"role": "assistant", "content": "OK."},
    ]


def test_free_text_questions_use_input_dialogs_and_empty_answers_cancel(fn):
    questions = [fn.Question("a", "Name?"), fn.Question("b", "Why?")]

    requests = fn.dialog_requests(questions)

    assert [r["type"] for r in requests] == ["input", "input"]
    assert requests[1]["data"]["message"] == "Why?"
    assert fn.dialog_answers(questions, ["Ada", " because "]) == {
        "a": "Ada",
        "b": "because",
    }
    assert fn.dialog_answers(questions, ["Ada", False]) is None
    assert fn.dialog_answers(questions, ["Ada", {"error": "timed out"}]) is None


def test_parallel_questions_with_choices_share_one_form(fn):
    questions = [
        fn.Question("a", "Ship?", ("yes", "no")),
        fn.Question("b", "Note?"),
    ]

    (request,) = fn.dialog_requests(questions)
    reply = {
        "status": "answered",
        "answers": {
            "a": {"type": "option", "option_index": 1, "label": "no"},
            "b": {"type": "other", "text": "fragile"},
        },
    }

    assert [q["id"] for q in request["data"]["questions"]] == ["a", "b"]
    assert request["data"]["questions"][1]["allow_other"] is True
    assert fn.dialog_answers(questions, [reply]) == {"a": "no", "b": "fragile"}


def test_settings_equal_to_the_defaults_are_not_sent(fn):
    graph = fn.Graph(
        model="lgos/simple",
        client_settings={"defaults": {"audience": "general", "use_history": True}},
    )
    valve = json.dumps(
        {"lgos/simple": {"audience": "general", "use_history": False}, "x": {}}
    )

    assert fn.settings_for(graph, valve) == '{"use_history":false}'
    assert fn.settings_for(graph, json.dumps({"other": {"a": 1}})) is None


@pytest.mark.parametrize(
    ("valve", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1]", "JSON object keyed by model"),
        ('{"lgos/simple": 3}', "must be a JSON object"),
    ],
)
def test_a_bad_settings_valve_is_a_clear_error(fn, valve, message):
    graph = fn.Graph(model="lgos/simple")

    with pytest.raises(fn.LgosError, match=message):
        fn.settings_for(graph, valve)


def test_litellm_wrapped_errors_keep_the_lgos_code(fn):
    inner = {"error": {"message": "gone", "code": "interrupt_state_conflict"}}
    body = {
        "error": {"message": f"OpenAIException - {json.dumps(inner)}", "code": "409"}
    }

    assert fn._error_message(409, json.dumps(body).encode()) == (
        "interrupt_state_conflict",
        "gone",
    )


def test_errors_through_the_stacks_gateway_keep_the_lgos_code(fn):
    # What lgos_gateway_errors.py makes LiteLLM answer: LGOS's message, the
    # status as the code, LGOS's envelope in provider_specific_fields.
    lgos = {"message": "gone", "type": "invalid_request_error", "param": None}
    body = {
        "error": {
            **lgos,
            "code": "409",
            "provider_specific_fields": {
                "error": {**lgos, "code": "interrupt_state_conflict"}
            },
        }
    }

    assert fn._error_message(409, json.dumps(body).encode()) == (
        "interrupt_state_conflict",
        "gone",
    )
