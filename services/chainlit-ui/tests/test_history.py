"""Chat history for Chainlit's resume: users, threads and steps on disk."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from lgos_chainlit.config import UIConfig
from lgos_chainlit.history import ThreadFiles


@pytest.fixture
def history(tmp_path) -> ThreadFiles:
    return ThreadFiles(tmp_path / "history")


def test_a_thread_keeps_its_owner_metadata_and_steps_in_order(history):
    alice = history.create_user("alice", {"role": "admin"})
    history.update_thread("t1", name="Refunds", user_id=alice["id"])
    history.update_thread("t1", metadata={"chat_profile": "refund"})
    history.update_thread("t1", metadata={"chat_settings": {}})
    history.upsert_step({"id": "s2", "threadId": "t1", "createdAt": "2026-01-02"})
    history.upsert_step({"id": "s1", "threadId": "t1", "createdAt": "2026-01-01"})
    history.upsert_step({"id": "s1", "threadId": "t1", "output": "done", "end": None})

    thread = history.get_thread("t1")

    assert thread["name"] == "Refunds"
    assert (thread["userId"], thread["userIdentifier"]) == (alice["id"], "alice")
    assert thread["metadata"] == {"chat_profile": "refund", "chat_settings": {}}
    assert [step["id"] for step in thread["steps"]] == ["s1", "s2"]
    assert thread["steps"][0]["output"] == "done"
    assert thread["elements"] == []
    assert history.thread_author("t1") == "alice"
    assert history.get_user("alice")["metadata"] == {"role": "admin"}
    assert history.create_user("alice")["id"] == alice["id"]


def test_threads_list_newest_first_per_user_with_search_and_cursor(history):
    alice = history.create_user("alice")["id"]
    bob = history.create_user("bob")["id"]
    for number in range(4):
        history.update_thread(f"a{number}", name=f"chat {number}", user_id=alice)
    history.update_thread("b0", name="chat of bob", user_id=bob)

    first, more = history.list_threads(user_id=alice, first=2)
    rest, no_more = history.list_threads(user_id=alice, first=2, cursor=first[-1]["id"])
    found, _ = history.list_threads(user_id=None, search="BOB")

    assert [t["id"] for t in first] == ["a3", "a2"]
    assert more is True
    assert ([t["id"] for t in rest], no_more) == (["a1", "a0"], False)
    assert [t["id"] for t in found] == ["b0"]
    assert first[0]["steps"] == []


def test_deleting_steps_and_threads(history):
    history.upsert_step({"id": "s1", "threadId": "t1"})
    history.upsert_step({"id": "s2", "threadId": "t1"})
    history.upsert_step({"threadId": "t1"})  # no id: ignored

    history.delete_step("s1")
    assert [s["id"] for s in history.get_thread("t1")["steps"]] == ["s2"]

    history.delete_thread("t1")
    assert history.get_thread("t1") is None
    assert history.thread_author("t1") == ""


def test_passwords_are_checked_per_user(monkeypatch):
    monkeypatch.setenv("LGOS_CHAINLIT_USERS", json.dumps({"alice": "wonderland"}))
    config = UIConfig()

    assert config.check_password("alice", "wonderland")
    assert not config.check_password("alice", "wonderlan")
    assert not config.check_password("bob", "")
    assert "wonderland" not in repr(config)


def test_guests_older_than_their_session_are_forgotten_with_their_threads(history):
    old_guest = history.create_user("guest-old", {"guest": True})["id"]
    member = history.create_user("alice")["id"]
    history.update_thread("g1", name="guest chat", user_id=old_guest)
    history.update_thread("m1", name="member chat", user_id=member)
    created = datetime.now(UTC)
    new_guest = history.create_user("guest-new", {"guest": True})["id"]
    history.update_thread("g2", name="new guest chat", user_id=new_guest)

    assert history.prune_guests(created_before=created - timedelta(days=1)) == []
    removed = history.prune_guests(created_before=created)

    assert removed == ["g1"]
    assert history.get_user("guest-old") is None
    assert history.get_thread("g1") is None
    assert history.get_user("alice") is not None  # only guests expire
    assert history.get_thread("m1") is not None
    assert history.get_thread("g2") is not None
