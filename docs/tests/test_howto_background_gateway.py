"""A background run through LiteLLM, followed live on the stack's follow route.

The real LiteLLM proxy on the demo stack's own gateway configuration
(``lgos_stack.gateway``: its key check and its pass-through route
``/lgos/v1/responses`` to LGOS), in front of the page's sample app.
"""

from __future__ import annotations

import gateway_follow_client
import httpx
import pytest
import yaml
from conftest import expected_output
from lgos_stack.gateway import (
    FOLLOW_TARGET_ENV,
    install_gateway_modules,
    seed_config,
)
from lgos_testkit import lgos_routes, litellm

pytestmark = pytest.mark.timeout(600)
MASTER_KEY = "sk-docs-gateway-master"


def test_a_run_is_followed_live_through_the_gateway_and_resumed(
    serve, tmp_path, capsys
):
    server = serve("report_app")
    config = tmp_path / "config.yaml"
    seed_config(config)
    install_gateway_modules(tmp_path)
    document = yaml.safe_load(config.read_text())
    routes = lgos_routes(server.base_url, ["report"])
    config.write_text(yaml.safe_dump(document | {"model_list": routes}))
    target = {FOLLOW_TARGET_ENV: f"{server.base_url}/responses"}

    with litellm(config, MASTER_KEY, extra_env=target) as proxy:
        gateway_follow_client.main(proxy.url, MASTER_KEY)
        refused = httpx.get(
            f"{proxy.url}/lgos/v1/responses/resp_any",
            headers={"Authorization": "Bearer sk-someone-else"},
            timeout=60,
        )

    assert capsys.readouterr().out == expected_output("gateway_follow_client.out")
    assert refused.status_code == 401
