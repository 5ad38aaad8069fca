"""The private folder: what must not live under the agent's workspace.

Held-out checks (their commands, purposes and output) are kept here, outside the
workspace, so no agent working in the workspace can read them. The folder is
``$AXPIPE_PRIVATE_DIR`` when set, else ``$XDG_STATE_HOME/axpipe/<workspace>-<hash>``
(``~/.local/state/axpipe/...``), one per workspace.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any


def _base() -> tuple[Path, str]:
    """The folder private folders go in, and the variable that chose it."""
    override = os.environ.get("AXPIPE_PRIVATE_DIR")
    if override:
        return Path(override).expanduser(), "AXPIPE_PRIVATE_DIR"
    state_home = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state_home) / "axpipe", "XDG_STATE_HOME" if os.environ.get("XDG_STATE_HOME") else "HOME"


def inside_workspace(root: Path) -> str | None:
    """Why the private folder cannot be used for ``root`` (it lies inside it), or None.
    Recipe validation asks this before anything runs when a recipe has held-out checks."""
    base, source = _base()
    resolved = str(root.resolve())
    if base.resolve().is_relative_to(resolved):
        return (f"{source}: the private folder {base} is inside the workspace {resolved}, where the agent "
                "could read the held-out checks; set AXPIPE_PRIVATE_DIR to a folder outside it")
    return None


def private_dir(root: Path) -> Path:
    """This workspace's private folder (created on first use). A folder inside the workspace
    is refused: the agent works there, and the held-out checks would be readable."""
    problem = inside_workspace(root)
    if problem is not None:
        from axpipe.errors import InputError

        raise InputError(problem)
    base, _ = _base()
    resolved = str(root.resolve())
    folder = base / f"{Path(resolved).name}-{hashlib.sha256(resolved.encode()).hexdigest()[:12]}"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def save_held_out(root: Path, digest: str, held_out: dict[str, dict[str, Any]]) -> None:
    """Keep the full descriptions of a contract's held-out checks."""
    if not held_out:
        return
    path = private_dir(root) / "contracts" / f"{digest}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(held_out, indent=2, sort_keys=True), encoding="utf-8")


def load_held_out(root: Path, digest: str) -> dict[str, dict[str, Any]]:
    """The held-out check descriptions of contract ``digest`` (empty when it has none)."""
    path = private_dir(root) / "contracts" / f"{digest}.json"
    try:
        loaded: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
        return loaded
    except FileNotFoundError:
        return {}


def log_dir(root: Path, goal_id: str) -> Path:
    """Where held-out checks' logs go."""
    from axpipe.goals import folder_name

    folder = private_dir(root) / "logs" / folder_name(goal_id)
    folder.mkdir(parents=True, exist_ok=True)
    return folder
