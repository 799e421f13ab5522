"""``lgos-demo-stack``: every process the demos need, started and stopped together.

The operations tool behind ``just up``. Its public modules: ``net`` and
``processes`` (free ports, whether a PID runs, a process started, waited on
and stopped by its PID), ``files`` (``weed_mini_argv``), ``gateway``
(``LITELLM_OFFLINE_ENV``), ``webuis`` (``OPEN_WEBUI_OFFLINE_ENV``),
``services`` (``StackOptions``, ``plan_stack``) and ``supervisor``
(``Service``).
"""
