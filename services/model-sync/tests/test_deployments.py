"""Deployment specs: ``NAME=PREFIX,URL[,KEY_ENV]``."""

from __future__ import annotations

import pytest
from lgos_model_sync.deployments import (
    Deployment,
    parse_deployment,
    parse_deployments,
    split_specs,
)
from lgos_model_sync.errors import UsageError


def test_a_full_spec_names_prefix_url_and_key_variable() -> None:
    assert parse_deployment("main=lgos,http://lgos:8000/v1/,LGOS_KEY") == Deployment(
        name="main", prefix="lgos", base_url="http://lgos:8000/v1", key_env="LGOS_KEY"
    )


def test_the_key_variable_is_optional() -> None:
    assert parse_deployment("demo=demo,https://demo.example/v1").key_env is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("lgos,http://x/v1", "NAME=PREFIX,URL"),
        ("main=lgos", "NAME=PREFIX,URL"),
        ("main=lgos,http://x/v1,K,extra", "NAME=PREFIX,URL"),
        ("main=a/b,http://x/v1", "prefix must be one path segment"),
        ("main=lgos,ftp://x/v1", "base_url must be an http"),
        ("main=lgos,http://x/v1?q=1", "base_url must be an http"),
        ("main=lgos,http://x/v1,1BAD", "key_env must be an environment variable"),
        ("ma in=lgos,http://x/v1", "name must be"),
    ],
)
def test_a_malformed_spec_is_refused_quoting_it(spec: str, message: str) -> None:
    with pytest.raises(UsageError, match=message) as raised:
        parse_deployment(spec)

    assert repr(spec) in str(raised.value)


def test_deployment_names_must_be_unique() -> None:
    with pytest.raises(UsageError, match="'main' is given twice"):
        parse_deployments(["main=a,http://a/v1", "main=b,http://b/v1"])


def test_no_deployment_at_all_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="no deployment given"):
        parse_deployments([])


def test_specs_in_one_variable_split_on_semicolons_and_whitespace() -> None:
    assert split_specs(" a=p,http://a/v1;b=q,http://b/v1\n c=r,http://c/v1 ") == [
        "a=p,http://a/v1",
        "b=q,http://b/v1",
        "c=r,http://c/v1",
    ]


def test_a_named_key_variable_must_be_set() -> None:
    deployment = parse_deployment("main=lgos,http://x/v1,LGOS_KEY")

    with pytest.raises(UsageError, match=r"main.*LGOS_KEY.*not set"):
        deployment.api_key({})
    assert deployment.api_key({"LGOS_KEY": "k"}) == "k"
    assert deployment.litellm_api_key() == "os.environ/LGOS_KEY"
