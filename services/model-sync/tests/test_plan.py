"""The merge of today's model list with the owned entries a sync wants."""

from __future__ import annotations

from typing import Any

import pytest
from lgos_model_sync.catalog import Catalog, CatalogModel
from lgos_model_sync.deployments import Deployment
from lgos_model_sync.entries import desired_entries, is_owned
from lgos_model_sync.errors import ConflictError
from lgos_model_sync.plan import plan_merge

OWNER = "sync-a"
MAIN = Deployment(
    name="main", prefix="lgos", base_url="http://lgos:8000/v1", key_env="K"
)


def lgos(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "features": [],
        "server_tools": [],
        "client_tools": [],
    }


def wanted(*ids: str, deployment: Deployment = MAIN) -> list[dict[str, Any]]:
    models = tuple(CatalogModel(id=i, lgos=lgos(f"about {i}")) for i in ids)
    return desired_entries([Catalog(deployment=deployment, models=models)], OWNER)


def unowned(name: str) -> dict[str, Any]:
    return {"model_name": name, "litellm_params": {"model": "openai/x"}}


def names(entries: Any) -> list[str]:
    return [entry["model_name"] for entry in entries]


def test_entries_route_to_the_deployment_and_carry_lgos_and_the_marker() -> None:
    (entry,) = wanted("echo")

    assert entry == {
        "model_name": "lgos/echo",
        "litellm_params": {
            "model": "openai/echo",
            "api_base": "http://lgos:8000/v1",
            "api_key": "os.environ/K",
        },
        "model_info": {
            "lgos": lgos("about echo"),
            "lgos_sync": {
                "owner": OWNER,
                "deployment": "main",
                "source": "http://lgos:8000/v1",
            },
        },
    }


def test_entries_are_sorted_by_model_name_whatever_the_catalog_order() -> None:
    other = Deployment(name="other", prefix="alpha", base_url="http://o/v1")

    entries = wanted("zeta", "beta") + wanted("mid", deployment=other)

    assert names(sorted(entries, key=lambda e: e["model_name"])) == [
        "alpha/mid",
        "lgos/beta",
        "lgos/zeta",
    ]
    assert names(wanted("zeta", "beta")) == ["lgos/beta", "lgos/zeta"]


def test_a_deployment_without_a_key_gets_a_placeholder_not_a_secret() -> None:
    open_deployment = Deployment(name="open", prefix="p", base_url="http://o/v1")

    (entry,) = wanted("echo", deployment=open_deployment)

    assert entry["litellm_params"]["api_key"] == "no-key"


def test_first_sync_appends_owned_entries_after_unowned_ones() -> None:
    plan = plan_merge([unowned("hand/a")], OWNER, wanted("echo", "tuned"))

    assert names(plan.model_list) == ["hand/a", "lgos/echo", "lgos/tuned"]
    assert plan.added == ("lgos/echo", "lgos/tuned")
    assert plan.unowned == 1


def test_owned_block_stays_where_the_first_owned_entry_was() -> None:
    current = [unowned("hand/a"), *wanted("echo"), unowned("hand/b")]

    plan = plan_merge(current, OWNER, wanted("echo", "tuned"))

    assert names(plan.model_list) == ["hand/a", "lgos/echo", "lgos/tuned", "hand/b"]


def test_owned_entry_missing_from_the_catalog_is_removed() -> None:
    current = [*wanted("echo", "retired"), unowned("hand/a")]

    plan = plan_merge(current, OWNER, wanted("echo"))

    assert names(plan.model_list) == ["lgos/echo", "hand/a"]
    assert plan.removed == ("lgos/retired",)
    assert plan.unchanged == ("lgos/echo",)


def test_changed_lgos_details_are_an_update() -> None:
    current = wanted("echo")
    fresh = wanted("echo")
    fresh[0]["model_info"]["lgos"]["description"] = "new words"

    plan = plan_merge(current, OWNER, fresh)

    assert plan.updated == ("lgos/echo",)
    assert plan.model_list == tuple(fresh)


def test_entries_of_another_owner_are_kept_untouched() -> None:
    theirs = desired_entries(
        [
            Catalog(
                deployment=Deployment("x", "theirs", "http://t/v1"),
                models=(CatalogModel(id="echo", lgos=lgos("theirs")),),
            )
        ],
        "sync-b",
    )

    plan = plan_merge([*theirs, *wanted("old")], OWNER, [])

    assert plan.model_list == tuple(theirs)
    assert plan.removed == ("lgos/old",)
    assert not is_owned(theirs[0], OWNER)


def test_non_mapping_items_are_not_owned_and_are_kept() -> None:
    plan = plan_merge(["odd", None, *wanted("echo")], OWNER, [])

    assert plan.model_list == ("odd", None)


def test_a_name_taken_by_an_unowned_entry_is_a_conflict() -> None:
    with pytest.raises(ConflictError, match=r"lgos/echo.*does not own"):
        plan_merge([unowned("lgos/echo")], OWNER, wanted("echo"))


def test_two_deployments_producing_one_name_is_a_conflict() -> None:
    twin = Deployment(name="twin", prefix="lgos", base_url="http://twin/v1")

    with pytest.raises(ConflictError, match=r"lgos/echo.*twice"):
        plan_merge([], OWNER, wanted("echo") + wanted("echo", deployment=twin))


def test_merging_the_result_again_changes_nothing() -> None:
    first = plan_merge([unowned("hand/a")], OWNER, wanted("echo", "tuned"))

    second = plan_merge(list(first.model_list), OWNER, wanted("echo", "tuned"))

    assert second.model_list == first.model_list
    assert not second.has_entry_changes
