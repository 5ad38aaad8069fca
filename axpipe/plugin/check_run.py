"""Running a check kind's ``run`` so that whatever the plugin does, the result is evidence
axpipe can record: a well-formed :class:`~axpipe.interfaces.CheckOutcome`.

Receipts (:mod:`axpipe.goal.receipts`) and the repair loop's success condition both run check
kinds through :func:`run_check`, which gives every check the evidence environment
(:mod:`axpipe.evidence.env`): what a check runs leaves no bytecode or cache in the checkout.
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any

from axpipe.evidence import env as evidence_env
from axpipe.interfaces import CheckOutcome, CheckRequest, CheckStatus
from axpipe.plugin import calls as plugin_calls
from axpipe.plugin import registry


def run_check(kind: Any, request: CheckRequest) -> CheckOutcome:
    """``kind.run(request)`` as evidence can use it: a plugin that raises, calls
    ``sys.exit``, returns something else than a well-formed :class:`CheckOutcome` or is
    still running when twice its timeout plus :data:`~axpipe.plugin.calls.CHECK_GRACE_SECONDS`
    have passed gives an ``error`` outcome naming the plugin and its distribution."""
    started = time.monotonic()
    # The evidence environment wins over the caller's variables: a check's own
    # PYTHONPYCACHEPREFIX would let outdated bytecode decide (PYTEST_ADDOPTS is extended).
    inherited = {**os.environ, **request.env}
    request = dataclasses.replace(request, env={**request.env, **evidence_env.variables(request.cwd, inherited)})
    limit = 2 * request.timeout + plugin_calls.CHECK_GRACE_SECONDS
    try:
        reason = (f"it was still running {limit:g} s after it started (twice the check's timeout of "
                  f"{request.timeout:g} s, plus {plugin_calls.CHECK_GRACE_SECONDS:g} s)")
        outcome: CheckOutcome = plugin_calls.call(kind, "run", request, returns=CheckOutcome, limit=limit,
                                                  limit_reason=reason)
        problem = malformed(outcome)
        if problem is not None:
            raise plugin_calls.PluginFault(f"{registry.describe(kind)} run()", f"returned {problem}")
    except plugin_calls.PluginFault as fault:
        return CheckOutcome(status=CheckStatus.ERROR, summary=fault.message, duration=time.monotonic() - started)
    return outcome


def malformed(outcome: CheckOutcome) -> str | None:
    """What is wrong with the fields of a plugin's :class:`CheckOutcome`, or None."""
    if not isinstance(outcome.status, CheckStatus):
        return f"a CheckOutcome whose status {outcome.status!r} is not a CheckStatus (PASSED, FAILED or ERROR)"
    for name, kinds in (("summary", str), ("output_tail", str), ("exit_code", (int, type(None))),
                        ("output_bytes", int), ("duration", (int, float)), ("missing_program", (str, type(None)))):
        value = getattr(outcome, name)
        if not isinstance(value, kinds) or (name == "exit_code" and isinstance(value, bool)):
            return f"a CheckOutcome whose {name} is {type(value).__name__} {value!r}"
    return None
