"""``citations``: answers cite exactly the URLs the search returned."""

from __future__ import annotations

from demo_support import answer_text, commentary, deltas, drain
from lgos_demos.search_client import MAX_QUERY_CHARS, search_query

QUESTION = "How do I upload files to the Files API?"


def _search_urls(http, stack, query: str) -> set[str]:
    found = http.get(
        f"{stack.search_url}/search", params={"q": query, "format": "json"}
    )
    return {result["url"] for result in found.json()["results"]}


def test_responses_answer_carries_url_citations_to_retrieved_pages(api, http, stack):
    response = api.responses.create(model="citations", input=QUESTION)

    part = response.output[-1].content[0]
    notes = part.annotations
    assert notes, part.text
    assert {note.type for note in notes} == {"url_citation"}
    assert {note.url for note in notes} <= _search_urls(http, stack, QUESTION)
    for number, note in enumerate(notes, 1):
        cited = part.text[note.start_index : note.end_index + 1]
        assert cited.endswith(f"[{number}]")
    assert http.get(notes[0].url).status_code == 200  # the cited page opens
    assert commentary(response) == []  # statuses are stream-only


def test_streamed_citations_arrive_as_annotation_events(api):
    events, final = drain(
        api.responses.create(model="citations", input=QUESTION, stream=True)
    )

    added = [
        e.annotation
        for e in events
        if e.type == "response.output_text.annotation.added"
    ]
    assert deltas(events, final) == answer_text(final)
    assert [a.url for a in added] == [
        a.url for a in final.output[-1].content[0].annotations
    ]
    statuses = commentary(final)
    assert statuses[0] == f"Searching the docs for “{QUESTION}”"
    assert statuses[-1].startswith("Found ")


def test_chat_completions_return_annotations_on_the_message(api):
    reply = api.chat.completions.create(
        model="citations", messages=[{"role": "user", "content": QUESTION}]
    )

    message = reply.choices[0].message
    assert message.annotations
    assert message.annotations[0].type == "url_citation"
    assert message.annotations[0].url_citation.url.startswith("http://127.0.0.1:")


def test_nothing_found_is_answered_without_citations(api):
    response = api.responses.create(model="citations", input="xylophone zeppelin")

    assert "found no sources" in response.output[-1].content[0].text
    assert response.output[-1].content[0].annotations == []


def test_a_pasted_document_is_searched_by_its_beginning_and_answered(api):
    # 100 KB as the question: all of it in the search URL used to fail the run.
    document = "How do I upload files to the Files API? " * 2500

    _, final = drain(
        api.responses.create(model="citations", input=document, stream=True)
    )

    statuses = commentary(final)
    searched = search_query(document)
    assert final.status == "completed"
    assert statuses[0] == f"Searching the docs for “{searched}”"
    assert len(searched) <= MAX_QUERY_CHARS
    assert searched.endswith("…")
    assert statuses[-1].startswith("Found ")
    assert final.output[-1].content[0].annotations  # answered from the sources
