"""Sample projects shipped with axpipe, copied into fresh git repositories for the demo.

Each folder here that is not a Python package is a sample project; ``agents/`` holds the
scripted agents the demo recipes run (``python3 -m axpipe.samples.agents.<name>``).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from axpipe import git, resources
from axpipe.errors import InputError, not_found_message

# Commits in the sample repository must not depend on the user's git identity.
_GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "axpipe demo", "GIT_AUTHOR_EMAIL": "demo@axpipe.invalid",
    "GIT_COMMITTER_NAME": "axpipe demo", "GIT_COMMITTER_EMAIL": "demo@axpipe.invalid",
}


def available() -> list[str]:
    """Sample project names: the folders here that are not Python packages (``agents`` is)."""
    return sorted(path.name for path in resources.samples_dir().iterdir()
                  if path.is_dir() and not path.name.startswith(("_", ".")) and not (path / "__init__.py").exists())


def persistent(name: str, invocation_root: Path) -> Path:
    """The sample's copy under ``<root>/.axpipe/workspaces/<name>``, made on first use and kept."""
    from axpipe.workspace import ensure_state_dir

    target = ensure_state_dir(invocation_root) / "workspaces" / name
    if (target / ".git").is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fresh = prepare(name, parent=target.parent)
    fresh.rename(target)
    return target


def prepare(name: str, parent: Path | None = None) -> Path:
    """Copy sample ``name`` into a new temporary git repository with one commit; return it."""
    source = resources.samples_dir() / name
    if not source.is_dir():
        raise InputError("workspace.sample: " + not_found_message("sample project", name, available()))
    target = Path(tempfile.mkdtemp(prefix=f"axpipe-demo-{name}-", dir=parent))
    shutil.copytree(source, target, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".axpipe"))
    for command in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", f"sample project {name}"]):
        git.run(target, *command, env=_GIT_IDENTITY, check=True)
    return target
