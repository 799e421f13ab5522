"""The Chainlit UI as a person uses it: open it, pick a graph, type, click.

The stack's Chainlit runs as it does by default: no login page, each browser
signed in as its own guest, whose chats are kept and listed in the sidebar
(pytest-playwright gives every test a new browser context, so a new guest).

Every wait is on something the page shows or receives, never a fixed sleep.
One thing is not visible: when a graph is picked, Chainlit opens a new chat
session and runs ``on_chat_start``; a file attached before that session is
up is dropped. An init script counts the ``on_chat_start`` runs the page
receives over its socket, so ``pick_graph`` can wait for the new session.
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Locator, Page, expect

# Counts the frames that end a chat start (the update of its "on_chat_start"
# run) on every connection the page opens. Socket.IO starts on HTTP
# long-polling and upgrades to a WebSocket later: on a busy machine the first
# frames of a session (its chat start among them) can come by polling, so
# both carriers are watched. A polling answer may hold several frames,
# separated by the record separator (U+001E).
_SESSION_WATCH = """
(() => {
  window.__lgosChatStarts = 0;
  const count = (data) => {
    if (typeof data !== "string") return;
    for (const frame of data.split("\\x1e")) {
      if (frame.includes('"update_message"') && frame.includes('"on_chat_start"')) {
        window.__lgosChatStarts += 1;
      }
    }
  };
  const Native = window.WebSocket;
  class Watched extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => count(event.data));
    }
  }
  window.WebSocket = Watched;
  const open = XMLHttpRequest.prototype.open;
  XMLHttpRequest.prototype.open = function (method, url, ...rest) {
    if (method === "GET" && String(url).includes("/socket.io/")) {
      this.addEventListener("load", () => count(this.responseText));
    }
    return open.call(this, method, url, ...rest);
  };
})();
"""

# Records each distinct text of the newest answer while it changes, so a test
# can tell a streamed answer (many growing prefixes) from one that appeared
# whole.
_ANSWER_WATCH = """
() => {
  window.__lgosAnswerTexts = [];
  const latest = () => {
    const answers = document.querySelectorAll(
      '[data-step-type="assistant_message"] .message-content');
    return answers.length ? answers[answers.length - 1].innerText : "";
  };
  const seen = window.__lgosAnswerTexts;
  new MutationObserver(() => {
    const text = latest();
    if (text && seen[seen.length - 1] !== text) seen.push(text);
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
}
"""


# Records what the page showed when a "Progress" step first showed the
# expected text: the answers there were by then (live progress comes before
# its answer).
_PROGRESS_WATCH = """
(expected) => {
  window.__lgosProgressSeen = null;
  const observer = new MutationObserver(() => {
    const steps = [...document.querySelectorAll('[data-step-type="run"]')]
      .filter((step) => step.innerText.includes("Progress"));
    const text = steps.map((step) => step.innerText).join("\\n");
    if (window.__lgosProgressSeen === null && text.includes(expected)) {
      window.__lgosProgressSeen = {
        answers: [...document.querySelectorAll(
          '[data-step-type="assistant_message"]')].map((a) => a.innerText),
      };
      observer.disconnect();
    }
  });
  observer.observe(
    document.body, {subtree: true, childList: true, characterData: true});
}
"""


class ChainlitPage:
    """One browser tab on the stack's Chainlit."""

    def __init__(self, page: Page, base_url: str) -> None:
        self.page = page
        self.base_url = base_url.rstrip("/")
        page.add_init_script(_SESSION_WATCH)

    # -- getting in -------------------------------------------------------

    def open(self) -> None:
        """Open the UI: a new browser is signed in as a guest by itself."""
        self.page.goto(self.base_url)
        expect(self.page.locator("#chat-input")).to_be_visible()
        # The first chat (the default graph) must have started, or picking a
        # graph could mistake its start for the new chat's.
        self.page.wait_for_function("() => window.__lgosChatStarts > 0")

    def _chat_starts(self) -> int:
        return int(self.page.evaluate("() => window.__lgosChatStarts || 0"))

    def pick_graph(self, model: str) -> None:
        """Choose ``model`` in the profile selector; wait for its new chat.

        Choosing the profile already selected (the default one, right after
        opening) starts no new chat: its chat is the current one."""
        profiles = self.page.locator("#chat-profiles")
        if profiles.inner_text().strip() == model:
            return
        before = self._chat_starts()
        self.page.locator("#chat-profiles").click()
        self.page.locator(f'[data-test="select-item:{model}"]').click()
        expect(self.page.locator("#chat-profiles")).to_have_text(model)
        self.page.wait_for_function(
            "(before) => window.__lgosChatStarts > before", arg=before
        )

    def new_chat(self, model: str) -> None:
        self.page.locator("#new-chat-button").click()
        self.page.get_by_role("button", name="Confirm").click()
        self.pick_graph(model)

    # -- talking ----------------------------------------------------------

    def send(self, text: str) -> None:
        self.page.locator("#chat-input").fill(text)
        self.page.locator("#chat-submit").click()

    def attach(self, path: Path) -> None:
        self.page.locator("#upload-button-input").set_input_files(path)
        expect(
            self.page.locator("#message-composer").get_by_text(path.name)
        ).to_be_visible()

    def watch_answers(self) -> None:
        """Start recording how the newest answer's text changes."""
        self.page.evaluate(_ANSWER_WATCH)

    def watch_progress(self, expected: str) -> None:
        """Start recording what the page showed when a progress step first
        showed ``expected``."""
        self.page.evaluate(_PROGRESS_WATCH, expected)

    def answers_when_progress_appeared(self) -> list[str]:
        """The answers' texts the page showed when progress text first appeared."""
        self.page.wait_for_function("() => window.__lgosProgressSeen !== null")
        texts = self.page.evaluate("() => window.__lgosProgressSeen.answers")
        return [str(text) for text in texts]

    def answer_texts(self) -> list[str]:
        texts = self.page.evaluate("() => window.__lgosAnswerTexts || []")
        return [str(text) for text in texts]

    # -- what the page shows ----------------------------------------------

    @property
    def answers(self) -> Locator:
        return self.page.locator('[data-step-type="assistant_message"]')

    @property
    def past_chats(self) -> Locator:
        """The sidebar's list of this browser's chats."""
        return self.page.locator("#thread-history")

    @property
    def user_messages(self) -> Locator:
        return self.page.locator('[data-step-type="user_message"]')

    @property
    def last_answer(self) -> Locator:
        return self.answers.last

    def answer_containing(self, text: str) -> Locator:
        return self.answers.filter(has_text=text)

    @property
    def progress_steps(self) -> Locator:
        """Commentary: one open "Progress" step per request, above its answer."""
        return self.page.locator('[data-step-type="run"]').filter(has_text="Progress")

    def open_settings(self) -> Locator:
        self.page.locator("#chat-settings-open-modal").click()
        dialog = self.page.get_by_role("dialog")
        expect(dialog).to_be_visible()
        return dialog

    def confirm_settings(self, dialog: Locator) -> None:
        dialog.locator("#confirm").click()
        expect(dialog).to_be_hidden()

    def choose_setting(self, setting_id: str, option: str) -> None:
        """Pick ``option`` in the select ``setting_id`` of the open dialog."""
        self.page.locator(f'[id="{setting_id}"]').click()
        self.page.get_by_role("option", name=option, exact=True).click()

    @property
    def stop_button(self) -> Locator:
        """Chainlit's stop button: shown while the chat's turn runs."""
        return self.page.locator("#stop-button")

    def set_slider_to_maximum(self, dialog: Locator, setting_id: str) -> None:
        """Move the slider ``setting_id`` of the open settings dialog to its
        maximum (its End key)."""
        dialog.locator(f'[id="{setting_id}"]').get_by_role("slider").press("End")

    def button(self, label: str) -> Locator:
        return self.page.get_by_role("button", name=label, exact=True)
