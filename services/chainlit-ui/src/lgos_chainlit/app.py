"""The Chainlit app: thin callbacks over ``Conversation`` and ``TurnView``.

Run with ``lgos-chainlit`` (or ``chainlit run`` on this file). Everything
with logic lives in plain modules; this file only wires Chainlit's callbacks
to them and keeps one ``Conversation`` in each Chainlit user session.
"""

# Chainlit leaves many of its methods unannotated (send, user_session.get, ...).
# mypy: allow-untyped-calls, allow-untyped-decorators

from __future__ import annotations

import asyncio
import functools
import secrets
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import chainlit as cl
from chainlit.config import config as chainlit_config
from chainlit.data import get_data_layer
from chainlit.input_widget import (
    InputWidget,
    NumberInput,
    Select,
    Slider,
    Switch,
    TextInput,
)
from chainlit.session import WebsocketSession

from lgos_chainlit.catalog import LIMITED_NOTICE, CatalogError
from lgos_chainlit.config import UIConfig
from lgos_chainlit.conversation import Attachment, Conversation
from lgos_chainlit.datalayer import FileDataLayer
from lgos_chainlit.events import Notice, UIEvent
from lgos_chainlit.follower_tasks import Followers
from lgos_chainlit.limits import accept_socket_frames, oversized_message
from lgos_chainlit.presentation import STILL_ANSWERING
from lgos_chainlit.runtime_settings import (
    SettingField,
    SettingsError,
    changed_settings,
    encode_settings,
    from_widget,
    to_widget,
)
from lgos_chainlit.services import Services, build_services
from lgos_chainlit.view import (
    CANCEL_ACTION,
    INTERRUPT_ACTION,
    TurnView,
    clear_question,
    notify,
    record_choice,
)
from lgos_chainlit.welcome import default_graph, guide, new_chat, profile_markdown

TOOL_PREFIX = "tool:"
SETTING_PREFIX = "setting:"
BACKGROUND_SETTING = "lgos:background"
FOLLOWERS_KEY = "lgos_followers"
GUEST_PREFIX = "guest-"
ICON = "/public/lgos.svg"
"""The profile icon (``lgos-chainlit`` puts it in the home's ``public/``);
with an icon, Chainlit's empty chat shows the profile's description."""


@functools.cache
def services() -> Services:
    """Built on first use, once per process (never at import)."""
    return build_services(UIConfig())


def _enable_history(config: UIConfig) -> None:
    """Users and the file data layer: Chainlit keeps, lists and resumes
    (``on_chat_resume``) chats only for a signed-in user with a data layer.

    With ``USERS``, a password login. Otherwise (``HISTORY``, the default)
    every browser is signed in as a new guest at its first visit, with no
    login page: Chainlit's login route calls the header callback at once when
    one is set, and the session cookie it then sets (15 days) keeps that
    identity across reloads and closed tabs, so each browser has its own chats.
    """
    if config.USERS:

        @cl.password_auth_callback
        async def login(username: str, password: str) -> cl.User | None:
            if config.check_password(username, password):
                return cl.User(identifier=username)
            return None

    elif config.HISTORY:

        @cl.header_auth_callback
        async def guest(headers: Any) -> cl.User:
            return cl.User(
                identifier=f"{GUEST_PREFIX}{secrets.token_hex(8)}",
                display_name="Guest",
                metadata={"guest": True},
            )

    else:
        return

    @cl.data_layer
    def history() -> FileDataLayer:
        return FileDataLayer(
            config.history_dir,
            chats=services().store,
            guest_lifetime=timedelta(
                seconds=chainlit_config.project.user_session_timeout
            ),
        )


def _brand() -> None:
    """Our name and style sheet (read by Chainlit for every page)."""
    chainlit_config.ui.name = "LGOS"
    chainlit_config.ui.custom_css = "/public/lgos.css"


_enable_history(services().config)
_brand()
accept_socket_frames()


@cl.set_chat_profiles
async def chat_profiles(current_user: Any = None) -> list[cl.ChatProfile]:
    try:
        graphs = await services().catalog.list_graphs()
    except CatalogError:
        return []
    first = default_graph(graphs, services().config.DEFAULT_GRAPH)
    return [
        cl.ChatProfile(
            name=graph.model,
            markdown_description=profile_markdown(graph, graphs),
            icon=ICON,
            default=graph is first,
            starters=[
                cl.Starter(label=prompt, message=prompt)
                for prompt in guide(graph).prompts
            ],
        )
        for graph in graphs
    ]


async def _open(thread_id: str) -> Conversation | None:
    """The session's Conversation: the chosen graph, on the saved state."""
    app = services()
    state = app.store.load(thread_id)
    try:
        # A resumed chat keeps its graph; a new one takes the chosen profile.
        model = state.model if state else cl.user_session.get("chat_profile")
        if not model:
            first = default_graph(
                await app.catalog.list_graphs(), app.config.DEFAULT_GRAPH
            )
            if first is None:
                raise CatalogError("the gateway lists no models")
            model = first.model
        graph = await app.catalog.describe(str(model))
    except CatalogError as exc:
        await notify(Notice("error", f"The graph catalog is unavailable: {exc}"))
        return None
    if state is None or state.model != graph.model:
        state = new_chat(thread_id, graph)
    user = cl.user_session.get("user")
    clients = app.for_user(getattr(user, "identifier", None))
    chat = Conversation(
        clients.gateway,
        graph,
        state,
        app.store,
        clients.files,
        follow_client=clients.follow,
    )
    cl.user_session.set("conversation", chat)
    await _send_settings(chat)
    if graph.limited:
        await notify(Notice("warning", LIMITED_NOTICE))
    await TurnView().render(chat.ask_pending())
    if chat.state.running is not None:
        # A background run was in flight when the page went away.
        await TurnView().render(chat.follow_running(), _followers())
    return chat


async def _report_follower_error(exc: Exception) -> None:
    await notify(
        Notice(
            "error",
            f"Following the background run failed: {exc or type(exc).__name__}. "
            "Send a message to follow it again.",
        )
    )


def _followers() -> Followers:
    """The session's background-run followers (tasks outliving handlers)."""
    followers = cl.user_session.get(FOLLOWERS_KEY)
    if not isinstance(followers, Followers):
        followers = Followers(_report_follower_error)
        cl.user_session.set(FOLLOWERS_KEY, followers)
    return followers


def _socket_session() -> WebsocketSession:
    session = cl.context.session
    if not isinstance(session, WebsocketSession):
        raise RuntimeError("a chat runs over a websocket session")
    return session


def _widget(field: SettingField, value: Any) -> InputWidget:
    common: dict[str, Any] = {
        "id": SETTING_PREFIX + field.name,
        "label": field.label,
        "description": field.description,
    }
    shown = to_widget(field, value)
    if field.kind == "switch":
        return Switch(initial=bool(shown), **common)
    if field.kind == "select":
        items = {str(choice): to_widget(field, choice) for choice in field.choices}
        return Select(items=items, initial_value=shown, **common)
    if field.kind == "slider":
        return Slider(
            initial=shown,
            min=field.minimum or 0,
            max=field.maximum or 0,
            step=field.step or 1,
            **common,
        )
    if field.kind == "number":
        return NumberInput(initial=shown, **common)
    return TextInput(initial=shown, multiline=field.kind == "json", **common)


async def _send_settings(chat: Conversation) -> None:
    widgets: list[InputWidget] = []
    for field in chat.fields:
        value = chat.state.settings.get(field.name, field.default)
        widgets.append(_widget(field, value))
    if not chat.graph.limited:
        for name in chat.graph.server_tools:
            widgets.append(
                Switch(
                    id=TOOL_PREFIX + name,
                    label=f"Server tool: {name}",
                    initial=name in chat.state.tools,
                )
            )
    if chat.offers_background:
        widgets.append(
            Switch(
                id=BACKGROUND_SETTING,
                label="Run in background",
                description="Queue each request; follow it here and cancel it "
                "while it runs.",
                initial=chat.state.background,
            )
        )
    if widgets:
        await cl.ChatSettings(widgets).send()


def _conversation() -> Conversation | None:
    chat = cl.user_session.get("conversation")
    return chat if isinstance(chat, Conversation) else None


@cl.on_chat_start
async def on_chat_start() -> None:
    await _open(cl.context.session.thread_id)


@cl.on_chat_resume
async def on_chat_resume(thread: Any) -> None:
    # Only with a Chainlit data layer and a user (a login or a guest); the
    # ledger is ours either way.
    thread_id = str(thread["id"])
    # Chainlit sends ``thread`` to the page once this returns; it was read
    # before, and a turn may have ended (and saved its answer) since. The
    # history as saved now, and a running turn as it shows now, are taken
    # together, with no await between (see ``live_turns``).
    layer = get_data_layer()
    saved = layer.steps_now(thread_id) if isinstance(layer, FileDataLayer) else None
    if saved is not None:
        thread["steps"] = saved
    live = services().turns.get(thread_id)
    if live is None:
        await _open(thread_id)
        return
    page = live.show_to(_socket_session().emit)
    chat: Conversation = live.conversation
    cl.user_session.set("conversation", chat)
    await _send_settings(chat)
    # The held events go to the page once Chainlit has sent it the history
    # (that ends this connection's handler, the current task).
    handler = asyncio.current_task()
    assert handler is not None
    _followers().start(page.join(after=handler))


@cl.on_stop
async def on_stop() -> None:
    """The stop button stops the chat's running turn, also one this page
    joined after a reload (Chainlit stops only its own session's task)."""
    turns = services().turns
    live = turns.get(cl.context.session.thread_id)
    if live is not None:
        turns.forget(live)  # a page opened from now on shows it stopped
        live.stop()


async def _answer_turn(chat: Conversation, events: AsyncIterator[UIEvent]) -> None:
    """Show a turn's events; while it runs, a reloaded page of the chat
    joins it (``on_chat_resume``)."""
    view = TurnView()
    session = _socket_session()
    with services().turns.running(chat.state.thread_id, chat, session, view):
        await view.render(events, _followers())


@cl.on_chat_end
async def on_chat_end() -> None:
    followers = cl.user_session.get(FOLLOWERS_KEY)
    if isinstance(followers, Followers):
        await followers.close()


@cl.on_settings_update
async def on_settings_update(values: dict[str, Any]) -> None:
    chat = _conversation()
    if chat is None:
        return
    try:
        chosen = {
            field.name: from_widget(field, values.get(SETTING_PREFIX + field.name))
            for field in chat.fields
            if SETTING_PREFIX + field.name in values
        }
        changed = changed_settings(chat.fields, chosen)
        encode_settings(changed)
    except SettingsError as exc:
        await notify(Notice("error", f"Settings not changed: {exc}."))
        return
    chat.state.settings = changed
    chat.state.tools = [
        name for name in chat.graph.server_tools if values.get(TOOL_PREFIX + name)
    ]
    if chat.offers_background:
        chat.state.background = bool(values.get(BACKGROUND_SETTING))
    chat.save()


@cl.on_message
async def on_message(message: cl.Message) -> None:
    chat = _conversation()
    if chat is None:
        await notify(Notice("error", "This chat has no graph; start a new chat."))
        return
    oversized = oversized_message(message.content, services().config.MAX_MESSAGE_BYTES)
    if oversized is not None:
        await notify(oversized)
        return
    live = services().turns.get(chat.state.thread_id)
    if live is not None:
        # Sent from a page that joined a turn still being answered: not
        # sent; the page shows the turn running (its stop button) until it
        # ends, as Chainlit ends a page's "running" with its handler.
        await notify(Notice("warning", STILL_ANSWERING))
        await live.ended()
        return
    pending = chat.state.pending
    prompt = pending.next_prompt() if pending is not None else None
    if prompt is not None:
        await clear_question()
        await _answer_turn(
            chat, chat.answer(prompt.call_id, message.content, typed=True)
        )
        return
    attachments = [
        Attachment(path=Path(element.path), name=element.name, mime=element.mime)
        for element in message.elements or []
        if element.path
    ]
    await _answer_turn(chat, chat.send(message.content, attachments))


@cl.action_callback(INTERRUPT_ACTION)
async def on_interrupt_choice(action: cl.Action) -> None:
    chat = _conversation()
    if chat is None:
        return
    payload = action.payload
    await clear_question()
    await record_choice(str(payload.get("answer")))
    await _answer_turn(
        chat, chat.answer(str(payload.get("call_id")), str(payload.get("answer")))
    )


@cl.action_callback(CANCEL_ACTION)
async def on_cancel_background(action: cl.Action) -> None:
    chat = _conversation()
    if chat is None:
        return
    await action.remove()
    running = chat.state.running
    if running is None or running.response_id != action.payload.get("response_id"):
        await notify(Notice("info", "That background run has already ended."))
        return
    # The follower task reports the cancelled run.
    await _answer_turn(chat, chat.cancel())
