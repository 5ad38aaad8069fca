"""axpipe.evidence.bytecode forgets the cached bytecode of changed sources, and only theirs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from axpipe.evidence import bytecode


def _compile(folder: Path, env: dict[str, str] | None = None, *options: str) -> None:
    """Compile every source under ``folder`` (or one file) with a real interpreter, as an
    import would."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", *options, str(folder)], check=True,
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


def test_racy_and_orphaned_evidence_bytecode_is_forgotten_and_the_rest_kept(tmp_path: Path) -> None:
    # conftest points XDG_CACHE_HOME, and so the evidence cache, at a folder of the session
    project = tmp_path / "project"
    project.mkdir()
    changed = int(time.time()) - 60  # every source was last changed a minute ago
    for name in ("racy.py", "settled.py", "gone.py", "hashed.py"):
        (project / name).write_text("VALUE = 1\n")
        os.utime(project / name, (changed, changed))
    prefix = {"PYTHONPYCACHEPREFIX": str(bytecode.evidence_prefix())}
    _compile(project / "hashed.py", prefix, "--invalidation-mode", "checked-hash")
    for name in ("racy.py", "settled.py", "gone.py"):
        _compile(project / name, prefix)
    cached = {path.name.split(".")[0]: path for path in bytecode.evidence_prefix().rglob("*.pyc")
              if str(project).lstrip(os.sep) in str(path)}
    assert sorted(cached) == ["gone", "hashed", "racy", "settled"]
    # written in the second its source was changed: a same-size edit later in that second
    # would keep the time it records (and a hash-based entry does not go by time at all)
    for name in ("racy", "hashed"):
        os.utime(cached[name], (changed + 0.5, changed + 0.5))
    os.utime(cached["settled"], (changed + 1, changed + 1))
    (project / "gone.py").unlink()

    removed = bytecode.forget_racy(project)

    assert sorted(path.name.split(".")[0] for path in removed) == ["gone", "racy"]
    assert cached["settled"].exists() and cached["hashed"].exists()
