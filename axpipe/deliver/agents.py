"""Agents started without commit or push (DESIGN §16).

With ``deliver:``, a preset whose CLI has a documented way to withhold committing and pushing
declares it as ``deliver_flags`` (data on the preset, in ``axpipe_builtin.agents``), and the
goal's turns start it with those flags added to its command. A CLI without such a control
(and the ``command`` agent, any program) gets nothing added: the runner's check that no
commit or ref moved during the unit (:mod:`axpipe.deliver.refs`) is what holds either way.
"""

from __future__ import annotations

import dataclasses
import shlex
from typing import Any, cast


def flags_of(agent: Any) -> tuple[str, ...]:
    flags = getattr(agent, "deliver_flags", ())
    return tuple(flags) if isinstance(flags, (tuple, list)) else ()


def without_commits(agent: Any, params: Any) -> Any:
    """``params`` with the agent's ``deliver_flags`` appended to its ``command`` (unchanged when none)."""
    flags = flags_of(agent)
    command = getattr(params, "command", None)
    if not flags or isinstance(params, type) or not dataclasses.is_dataclass(params) \
            or not isinstance(command, (str, list)):
        return params
    added: Any = f"{command} {shlex.join(flags)}" if isinstance(command, str) else [*command, *flags]
    return dataclasses.replace(cast(Any, params), command=added)
