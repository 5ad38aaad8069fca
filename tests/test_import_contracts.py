"""The import contracts of pyproject.toml (``[tool.importlinter]``) hold, and they bite.

``lint-imports`` (import-linter) reads the source without importing it: the layers (CLI,
commands, the lifecycle's packages, the foundation), the independence of the lifecycle's
steps, and no cycle among a package's modules. The second test plants an upward import in a
copy of the source and expects the contracts to refuse it, so a contract that stopped
checking anything would fail here too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(cwd: Path, *, path: list[Path] | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if path is not None:  # the copy's packages come first on sys.path
        env["PYTHONPATH"] = os.pathsep.join(str(folder) for folder in path)
    # --no-cache: nothing is written into the checkout
    return subprocess.run([str(LINT), "--no-cache", "--config", str(cwd / "pyproject.toml")], cwd=cwd,
                          capture_output=True, text=True, env=env)


def test_the_import_contracts_hold() -> None:
    completed = _lint(ROOT)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "0 broken" in completed.stdout


def test_a_planted_upward_import_breaks_a_contract(tmp_path: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "axpipe", tmp_path / "axpipe", ignore=ignore)
    shutil.copytree(ROOT / "plugins" / "axpipe_builtin", tmp_path / "plugins" / "axpipe_builtin", ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    errors = tmp_path / "axpipe" / "errors.py"
    errors.write_text(errors.read_text() + "\nfrom axpipe.run import lifecycle  # planted: reaching up\n")

    completed = _lint(tmp_path, path=[tmp_path, tmp_path / "plugins"])

    assert completed.returncode != 0, completed.stdout
    assert "axpipe.errors is not allowed to import axpipe.run" in completed.stdout, completed.stdout
