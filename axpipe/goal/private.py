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

from axpipe.errors import InputError
from axpipe.goal.record import folder_name


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
    path = held_out_path(root, digest)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")  # a crash never leaves half a file
    tmp.write_text(json.dumps(held_out, indent=2, sort_keys=True), encoding="utf-8")
    tmp.replace(path)


def held_out_path(root: Path, digest: str) -> Path:
    """The file keeping the held-out descriptions of contract ``digest``."""
    return private_dir(root) / "contracts" / f"{digest}.json"


def load_held_out(root: Path, digest: str) -> dict[str, dict[str, Any]]:
    """The held-out check descriptions of contract ``digest`` (empty when it has none).

    A file that cannot be read or is not a JSON object of descriptions is an input error
    naming it: the descriptions are only a copy (the recipe, matching the frozen contract,
    writes them again). Whether a description is still the frozen one is the caller's
    question (:func:`axpipe.goal.receipts.check_description` compares its digest)."""
    path = held_out_path(root, digest)
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as error:
        why = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise InputError(_unreadable(path, why)) from error
    except json.JSONDecodeError as error:
        raise InputError(_unreadable(path, f"not JSON: {error}")) from error
    if not isinstance(loaded, dict) or not all(isinstance(item, dict) for item in loaded.values()):
        raise InputError(_unreadable(path, "not a JSON object of check descriptions"))
    return loaded


def holds(root: Path, digest: str, held_out: dict[str, dict[str, Any]]) -> bool:
    """Whether the private folder keeps exactly ``held_out`` for contract ``digest`` (a
    missing, unreadable or edited file does not)."""
    try:
        return load_held_out(root, digest) == held_out
    except InputError:
        return False


def _unreadable(path: Path, why: str) -> str:
    return (f"the private folder's held-out descriptions {path} cannot be read ({why}); nothing was run. "
            "Run the goal's recipe again (axpipe run) to write them from the recipe")


def log_dir(root: Path, goal_id: str) -> Path:
    """Where held-out checks' logs go."""
    folder = private_dir(root) / "logs" / folder_name(goal_id)
    folder.mkdir(parents=True, exist_ok=True)
    return folder
