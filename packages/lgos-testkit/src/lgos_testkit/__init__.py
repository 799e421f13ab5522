"""Real-process helpers the LGOS test suites share (dev-only).

Each module has one job; import from the module (``lgos_testkit.litellm``,
``lgos_testkit.storage``...) or from here. Ports, polling and processes
(``free_port``, ``wait_until``, ``pid_alive``, ``running``...) have their one
home in the stack (``lgos_stack.net``, ``lgos_stack.processes``), whose
public modules this kit builds on; they are offered here too.
"""

from lgos_stack.net import (
    STARTUP_SECONDS,
    async_wait_until,
    free_port,
    free_ports,
    http_ok,
    wait_until,
    wait_while_progressing,
)
from lgos_stack.processes import RunningProcess, pid_alive, running, start_process

from lgos_testkit.batches import BATCH_ENDED, await_batch, wait_for_batch
from lgos_testkit.leaks import CLIENT_PACKAGES, no_async_generator_left
from lgos_testkit.litellm import (
    LITELLM_BIN,
    LITELLM_OFFLINE_ENV,
    LiteLLM,
    lgos_routes,
    litellm,
    litellm_config,
    litellm_env,
    start_litellm,
)
from lgos_testkit.memory import memory_bytes, peak_rss_bytes, reset_peak_rss
from lgos_testkit.responses import SETTLED, await_response, wait_for_response
from lgos_testkit.storage import (
    FilesApi,
    S3Endpoint,
    files_api,
    files_api_env,
    files_api_on_seaweedfs,
    seaweedfs,
    start_files_api,
)
from lgos_testkit.threads import ThreadServer
from lgos_testkit.webhooks import Received, WebhookReceiver

__all__ = [
    "BATCH_ENDED",
    "CLIENT_PACKAGES",
    "LITELLM_BIN",
    "LITELLM_OFFLINE_ENV",
    "SETTLED",
    "STARTUP_SECONDS",
    "FilesApi",
    "LiteLLM",
    "Received",
    "RunningProcess",
    "S3Endpoint",
    "ThreadServer",
    "WebhookReceiver",
    "async_wait_until",
    "await_batch",
    "await_response",
    "files_api",
    "files_api_env",
    "files_api_on_seaweedfs",
    "free_port",
    "free_ports",
    "http_ok",
    "lgos_routes",
    "litellm",
    "litellm_config",
    "litellm_env",
    "memory_bytes",
    "no_async_generator_left",
    "peak_rss_bytes",
    "pid_alive",
    "reset_peak_rss",
    "running",
    "seaweedfs",
    "start_files_api",
    "start_litellm",
    "start_process",
    "wait_for_batch",
    "wait_for_response",
    "wait_until",
    "wait_while_progressing",
]
