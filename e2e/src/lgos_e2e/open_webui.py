"""Open WebUI as a person uses it: pick a model, type, read the answer.

The stack runs it without login (``WEBUI_AUTH=False``). On the first visit a
"What's New" dialog covers the page until its button is pressed; Open WebUI
remembers that for the (single) user, so the suite dismisses it once per
stack (``dismiss_whats_new``).
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Locator, Page, expect

# Records each distinct text of the newest assistant message while it
# changes (see ChainlitPage.watch_answers).
_ANSWER_WATCH = """
() => {
  window.__lgosAnswerTexts = [];
  const latest = () => {
    const answers = document.querySelectorAll('.chat-assistant');
    return answers.length ? answers[answers.length - 1].innerText : "";
  };
  const seen = window.__lgosAnswerTexts;
  new MutationObserver(() => {
    const text = latest();
    if (text && seen[seen.length - 1] !== text) seen.push(text);
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
}
"""


def dismiss_whats_new(page: Page, base_url: str) -> None:
    """Open Open WebUI once and press the first-visit dialog's button."""
    page.goto(base_url)
    page.get_by_role("button", name="Okay, Let's Go!").click()
    expect(page.get_by_role("button", name="Okay, Let's Go!")).to_have_count(0)


class OpenWebUIPage:
    """One browser tab on the stack's Open WebUI."""

    def __init__(self, page: Page, base_url: str) -> None:
        self.page = page
        self.base_url = base_url.rstrip("/")

    def open(self) -> None:
        self.page.goto(self.base_url)
        expect(self.page.locator("#chat-input")).to_be_visible()

    def open_model_list(self) -> Locator:
        self.page.locator("#model-selector-model-button").click()
        options = self.page.get_by_role("option")
        expect(options.first).to_be_visible()
        return options

    def pick_model(self, model: str) -> None:
        """Choose the model whose id is ``model``; wait until it is selected."""
        self.open_model_list()
        option = self.page.locator(f'button[data-value="{model}"]')
        label = option.inner_text().strip()
        option.click()
        expect(self.page.locator("#model-selector-model-button")).to_have_attribute(
            "aria-label", f"Selected model: {label}"
        )

    def send(self, text: str) -> None:
        box = self.page.locator("#chat-input")
        box.fill(text)
        box.press("Enter")

    def attach(self, path: Path) -> None:
        """Upload ``path`` through the message box's file input."""
        self.page.locator("input[type=file]").first.set_input_files(path)
        composer = self.page.locator("#message-input-container")
        expect(composer.get_by_text(path.name)).to_be_visible()

    def watch_answers(self) -> None:
        self.page.evaluate(_ANSWER_WATCH)

    def answer_texts(self) -> list[str]:
        texts = self.page.evaluate("() => window.__lgosAnswerTexts || []")
        return [str(text) for text in texts]

    @property
    def last_answer(self) -> Locator:
        return self.page.locator(".chat-assistant").last


FUNCTION_PREFIX = "lgos_responses."
"""Model ids of the LGOS Function's graphs: ``lgos_responses.lgos/<graph>``."""
