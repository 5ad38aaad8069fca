"""The plugin interfaces (DESIGN §10, §13), each documented once.

A plugin is any object an entry point names (a class is instantiated with no arguments).
Each kind of plugin satisfies one :class:`typing.Protocol`. A plugin that takes
parameters declares ``params_schema``: a dataclass whose fields are validated exactly like
recipe keys (types, ``metadata={"doc", "min", "max", "choices"}``), so a typo in a
plugin's parameter is a config error naming its path before anything runs.

The protocols live in one submodule per plugin kind; importing a name from here loads only
its submodule, so a plugin (and ``plugins list``, which imports every plugin) pays for the
interfaces it uses, not for all of them.

| plugin kind | submodule |
| --- | --- |
| check kinds | :mod:`axpipe.interfaces.checks` |
| agents | :mod:`axpipe.interfaces.agents` |
| guards | :mod:`axpipe.interfaces.guards` |
| reviewers | :mod:`axpipe.interfaces.reviewers` |
| test adapters | :mod:`axpipe.interfaces.test_adapters` |
| receipt verifiers | :mod:`axpipe.interfaces.receipt_verifiers` |
| deliverers | :mod:`axpipe.interfaces.deliverers` |
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "Agent": "agents",
    "AgentOutcome": "agents",
    "AgentRequest": "agents",
    "AgentStatus": "agents",
    "ChangeSet": "guards",
    "Deliverer": "deliverers",
    "Opened": "deliverers",
    "PullRequest": "deliverers",
    "ChangedFile": "guards",
    "CheckKind": "checks",
    "CheckOutcome": "checks",
    "CheckRequest": "checks",
    "CheckStatus": "checks",
    "GateTestAdapter": "test_adapters",
    "GateTestEnding": "test_adapters",
    "GateTestRun": "test_adapters",
    "Guard": "guards",
    "GuardClass": "guards",
    "CollectedTests": "guards",
    "GuardContext": "guards",
    "GuardFinding": "guards",
    "Hunk": "guards",
    "NamedTest": "test_adapters",
    "NamedTestResult": "test_adapters",
    "NamedTestStatus": "test_adapters",
    "ReceiptProblem": "receipt_verifiers",
    "ReceiptReport": "receipt_verifiers",
    "ReceiptRequest": "receipt_verifiers",
    "ReceiptVerifier": "receipt_verifiers",
    "RepoLookup": "guards",
    "ReviewInvocation": "reviewers",
    "ReviewRequest": "reviewers",
    "Reviewer": "reviewers",
    "TestAdapter": "test_adapters",
    "TestRunReport": "test_adapters",
    "TestRunRequest": "test_adapters",
    "Usage": "agents",
}

__all__ = [
    "Agent",
    "AgentOutcome",
    "AgentRequest",
    "AgentStatus",
    "ChangeSet",
    "ChangedFile",
    "CheckKind",
    "CheckOutcome",
    "CheckRequest",
    "CheckStatus",
    "CollectedTests",
    "Deliverer",
    "GateTestAdapter",
    "GateTestEnding",
    "GateTestRun",
    "Guard",
    "GuardClass",
    "GuardContext",
    "GuardFinding",
    "Hunk",
    "NamedTest",
    "NamedTestResult",
    "NamedTestStatus",
    "Opened",
    "PullRequest",
    "ReceiptProblem",
    "ReceiptReport",
    "ReceiptRequest",
    "ReceiptVerifier",
    "RepoLookup",
    "ReviewInvocation",
    "ReviewRequest",
    "Reviewer",
    "TestAdapter",
    "TestRunReport",
    "TestRunRequest",
    "Usage",
]

if TYPE_CHECKING:
    from axpipe.interfaces.agents import Agent, AgentOutcome, AgentRequest, AgentStatus, Usage
    from axpipe.interfaces.checks import CheckKind, CheckOutcome, CheckRequest, CheckStatus
    from axpipe.interfaces.deliverers import Deliverer, Opened, PullRequest
    from axpipe.interfaces.guards import (
        ChangedFile,
        ChangeSet,
        CollectedTests,
        Guard,
        GuardClass,
        GuardContext,
        GuardFinding,
        Hunk,
        RepoLookup,
    )
    from axpipe.interfaces.receipt_verifiers import ReceiptProblem, ReceiptReport, ReceiptRequest, ReceiptVerifier
    from axpipe.interfaces.reviewers import Reviewer, ReviewInvocation, ReviewRequest
    from axpipe.interfaces.test_adapters import (
        GateTestAdapter,
        GateTestEnding,
        GateTestRun,
        NamedTest,
        NamedTestResult,
        NamedTestStatus,
        TestAdapter,
        TestRunReport,
        TestRunRequest,
    )


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'axpipe.interfaces' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"axpipe.interfaces.{module}"), name)
    globals()[name] = value
    return value
