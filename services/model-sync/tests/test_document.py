"""Writing the merged model list back into LiteLLM's configuration text."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from lgos_model_sync.catalog import Catalog, CatalogModel
from lgos_model_sync.deployments import Deployment
from lgos_model_sync.document import ConfigDocument
from lgos_model_sync.entries import desired_entries
from lgos_model_sync.errors import ConfigFileError
from lgos_model_sync.plan import plan_merge

OWNER = "lgos-model-sync"
MAIN = Deployment(
    name="main", prefix="lgos", base_url="http://lgos:8000/v1", key_env="K"
)

HAND_WRITTEN = """\
# LiteLLM configuration, maintained by hand
model_list:
    - model_name: hand/one    # indented by four, with a comment
      litellm_params: {model: openai/gpt-x, api_key: "os.environ/X"}

    # a comment between entries
    - model_name: hand/two
      litellm_params:
        model: 'openai/y'
        api_base: http://y:1/v1
general_settings:
  master_key: os.environ/LITELLM_MASTER_KEY   # trailing comment
litellm_settings: {drop_params: true}
"""


def wanted(*ids: str, description: str = "plain") -> list[dict[str, Any]]:
    models = tuple(
        CatalogModel(
            id=i,
            lgos={
                "description": f"{description} {i}",
                "features": ["client_events"],
                "server_tools": [],
                "client_tools": ["display_file"],
            },
        )
        for i in ids
    )
    return desired_entries([Catalog(deployment=MAIN, models=models)], OWNER)


def sync_text(text: str, desired: list[dict[str, Any]]) -> str:
    document = ConfigDocument.parse(text)
    plan = plan_merge(document.model_list, OWNER, desired)
    return document.render(plan.model_list, OWNER)


def test_first_sync_inserts_owned_entries_and_keeps_every_other_byte() -> None:
    synced = sync_text(HAND_WRITTEN, wanted("echo", "tuned"))

    cut = synced.index("    - model_name: lgos/echo")
    end = synced.index("general_settings:")
    assert synced[:cut] + synced[end:] == HAND_WRITTEN
    assert [e["model_name"] for e in yaml.safe_load(synced)["model_list"]] == [
        "hand/one",
        "hand/two",
        "lgos/echo",
        "lgos/tuned",
    ]


def test_removing_all_owned_entries_restores_the_original_bytes() -> None:
    synced = sync_text(HAND_WRITTEN, wanted("echo", "tuned"))

    assert sync_text(synced, []) == HAND_WRITTEN


def test_second_sync_with_the_same_catalog_changes_nothing() -> None:
    once = sync_text(HAND_WRITTEN, wanted("echo", "tuned"))

    assert sync_text(once, wanted("echo", "tuned")) == once


def test_an_update_changes_only_the_owned_entry_lines() -> None:
    once = sync_text(HAND_WRITTEN, wanted("echo"))

    twice = sync_text(once, wanted("echo", description="fresh"))

    changed = set(twice.splitlines()) - set(once.splitlines())
    assert changed == {"          description: fresh echo"}


def test_an_owned_entry_gone_from_the_catalog_is_cut_out() -> None:
    once = sync_text(HAND_WRITTEN, wanted("echo", "retired"))

    twice = sync_text(once, wanted("echo"))

    assert "lgos/retired" not in twice
    assert twice == sync_text(HAND_WRITTEN, wanted("echo"))


def test_unowned_entries_after_the_owned_block_stay_after_it() -> None:
    once = sync_text(HAND_WRITTEN, wanted("echo"))
    later = once.replace(
        "general_settings:",
        "    - model_name: hand/three\n      litellm_params: {model: openai/z}\n"
        "general_settings:",
    )

    twice = sync_text(later, wanted("echo", "tuned"))

    assert [e["model_name"] for e in yaml.safe_load(twice)["model_list"]] == [
        "hand/one",
        "hand/two",
        "lgos/echo",
        "lgos/tuned",
        "hand/three",
    ]
    assert twice.endswith(later[later.index("    - model_name: hand/three") :])


def test_strings_that_trouble_yaml_round_trip_exactly() -> None:
    tricky = "yes: no\n  indented line\n'quoted' \"double\" # not a comment — é\t"
    desired = wanted("echo", description=tricky)

    synced = sync_text(HAND_WRITTEN, desired)

    loaded = yaml.safe_load(synced)["model_list"][2]
    assert loaded == desired[0]
    assert sync_text(synced, []) == HAND_WRITTEN


def test_a_missing_model_list_is_appended_after_the_other_keys() -> None:
    text = "general_settings:\n  master_key: os.environ/M  # keep\n"

    synced = sync_text(text, wanted("echo"))

    assert synced.startswith(text + "model_list:\n  - model_name: lgos/echo\n")


@pytest.mark.parametrize("text", ["", "# only a comment\n"])
def test_an_empty_file_gets_a_model_list(text: str) -> None:
    synced = sync_text(text, wanted("echo"))

    assert synced.startswith(text)
    assert yaml.safe_load(synced)["model_list"] == wanted("echo")


def test_a_flow_style_model_list_is_rewritten_with_unowned_entries_equal() -> None:
    text = "model_list: [{model_name: hand/a, litellm_params: {model: openai/a}}]\n"
    text += "router_settings:   {num_retries: 2}\n"

    synced = sync_text(text, wanted("echo"))

    assert synced.endswith("router_settings:   {num_retries: 2}\n")
    assert yaml.safe_load(synced)["model_list"] == [
        {"model_name": "hand/a", "litellm_params": {"model": "openai/a"}},
        *wanted("echo"),
    ]


def test_removing_the_last_entries_leaves_an_empty_list() -> None:
    once = sync_text("model_list:\n", wanted("echo"))

    assert sync_text(once, []) == "model_list: []\n"


def test_windows_line_endings_are_kept() -> None:
    text = HAND_WRITTEN.replace("\n", "\r\n")

    synced = sync_text(text, wanted("echo"))

    assert "\n" not in synced.replace("\r\n", "")
    assert sync_text(synced, []) == text


def test_anchors_shared_with_the_model_list_still_load_identically() -> None:
    text = (
        "model_list:\n"
        "  - &base {model_name: hand/a, litellm_params: {model: openai/a}}\n"
        "router_settings:\n"
        "  copy: *base\n"
    )

    synced = sync_text(text, wanted("echo"))

    loaded = yaml.safe_load(synced)
    assert loaded["router_settings"]["copy"]["model_name"] == "hand/a"
    assert [e["model_name"] for e in loaded["model_list"]] == ["hand/a", "lgos/echo"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("model_list: [unclosed\n", "not valid YAML"),
        ("- a list at the top\n", "mapping at the top"),
        ("model_list: {a: 1}\n", "must be a list"),
    ],
)
def test_a_configuration_it_cannot_read_is_refused(text: str, message: str) -> None:
    with pytest.raises(ConfigFileError, match=message):
        ConfigDocument.parse(text)
