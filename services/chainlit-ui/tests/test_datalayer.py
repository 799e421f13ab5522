"""The data layer Chainlit calls: deleting a chat deletes all of it, and an
expired guest's chats go when a new guest comes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from chainlit.user import User
from lgos_chainlit.chats import ChatState, ChatStore
from lgos_chainlit.datalayer import FileDataLayer

GUEST = {"guest": True}

pytestmark = pytest.mark.anyio


@pytest.fixture
def chats(tmp_path) -> ChatStore:
    return ChatStore(tmp_path / "chats")


async def test_deleting_a_chat_deletes_its_ledger_too(tmp_path, chats):
    layer = FileDataLayer(tmp_path / "history", chats=chats)
    alice = await layer.create_user(User(identifier="alice"))
    await layer.update_thread("t1", name="Refunds", user_id=alice.id)
    chats.save(ChatState(thread_id="t1", model="lgos/simple"))

    await layer.delete_thread("t1")

    assert await layer.get_thread("t1") is None
    assert chats.load("t1") is None
    assert not list(chats.directory.iterdir())


async def test_a_new_guest_forgets_expired_guests_their_chats_and_ledgers(
    tmp_path, chats
):
    layer = FileDataLayer(
        tmp_path / "history", chats=chats, guest_lifetime=timedelta(0)
    )
    old = await layer.create_user(User(identifier="guest-1", metadata=GUEST))
    await layer.update_thread("t1", name="old chat", user_id=old.id)
    chats.save(ChatState(thread_id="t1", model="lgos/simple"))

    await layer.create_user(User(identifier="guest-2", metadata=GUEST))

    assert await layer.get_user("guest-1") is None
    assert await layer.get_thread("t1") is None
    assert chats.load("t1") is None
    assert await layer.get_user("guest-2") is not None


async def test_signing_in_a_member_forgets_no_guest(tmp_path, chats):
    layer = FileDataLayer(
        tmp_path / "history", chats=chats, guest_lifetime=timedelta(0)
    )
    guest = await layer.create_user(User(identifier="guest-1", metadata=GUEST))
    await layer.update_thread("t1", name="guest chat", user_id=guest.id)

    await layer.create_user(User(identifier="alice"))

    assert await layer.get_thread("t1") is not None
