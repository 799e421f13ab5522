"""The gateway as a person meets it in a browser: LiteLLM's address opened
with no key, or with a wrong one, says which key to send (a 401, not
LiteLLM's "400 No connected db.")."""

from __future__ import annotations

from lgos_testkit.stack import RunningStack
from playwright.sync_api import Page, expect

WRONG_KEY = "sk-not-the-master-key"


def test_the_gateway_opened_without_a_key_says_how_to_send_one(
    page: Page, stack: RunningStack
):
    response = page.goto(stack.url("LiteLLM") + "/models")

    assert response is not None
    assert response.status == 401
    expect(page.locator("body")).to_contain_text(
        "the LGOS gateway (LiteLLM) wants its master key as "
        "'Authorization: Bearer <LITELLM_MASTER_KEY>'"
    )


def test_a_wrong_gateway_key_is_refused_naming_the_key_to_send(
    page: Page, stack: RunningStack
):
    page.set_extra_http_headers({"Authorization": f"Bearer {WRONG_KEY}"})

    response = page.goto(stack.url("LiteLLM") + "/models")

    assert response is not None
    assert response.status == 401
    body = page.locator("body")
    expect(body).to_contain_text("Invalid API key for the LGOS gateway (LiteLLM)")
    expect(body).to_contain_text("LITELLM_MASTER_KEY")
    expect(body).not_to_contain_text("No connected db")
    expect(body).not_to_contain_text(WRONG_KEY)
