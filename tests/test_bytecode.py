"""axpipe.bytecode forgets the cached bytecode of changed sources, and only theirs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from axpipe import bytecode


def _compile(folder: Path, env: dict[str, str] | None = None) -> None:
    """Compile every source under ``folder`` with a real interpreter, as an import would."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(folder)], check=True,
                   env={**os.environ, **(env or {})})


def test_only_the_changed_sources_lose_their_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    (tmp_path / "pkg").mkdir()
    for name in ("calc.py", "calculator.py", "pkg/calc.py", "notes.txt"):
        (tmp_path / name).write_text("VALUE = 1\n")
    _compile(tmp_path)
    pytest_cache = tmp_path / "__pycache__" / f"calc.{sys.implementation.cache_tag}-pytest-8.3.4.pyc"
    pytest_cache.write_bytes(b"rewritten by pytest")

    removed = bytecode.forget(tmp_path, ["calc.py", "notes.txt", "gone.py", "missing/dir/x.py"])

    assert sorted(path.name for path in removed) == sorted(
        [f"calc.{sys.implementation.cache_tag}.pyc", pytest_cache.name])
    left = sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*.pyc"))
    assert left == [f"__pycache__/calculator.{sys.implementation.cache_tag}.pyc",
                    f"pkg/__pycache__/calc.{sys.implementation.cache_tag}.pyc"]


@pytest.mark.parametrize("through_a_symlink", [False, True])
def test_a_pycache_prefix_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      through_a_symlink: bool) -> None:
    prefix = tmp_path / "prefix"
    project = tmp_path / "project"
    project.mkdir()
    (project / "calc.py").write_text("VALUE = 1\n")
    if through_a_symlink:  # the checkout is reached through a link; Python keeps the linked path
        (tmp_path / "link").symlink_to(project)
        project = tmp_path / "link"
    _compile(project, {"PYTHONPYCACHEPREFIX": str(prefix)})
    assert list(prefix.rglob("calc.*.pyc"))
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(prefix))

    removed = bytecode.forget(project, ["calc.py"])

    assert len(removed) == 1 and not list(prefix.rglob("calc.*.pyc"))
