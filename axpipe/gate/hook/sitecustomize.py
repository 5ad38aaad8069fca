"""Loaded by every Python process of a gate's baseline run (axpipe puts this folder first on
``PYTHONPATH``; see ``axpipe/gate_isolation.py``). It never imports axpipe: it runs under the
project's interpreter, whatever that has installed.

1. **Isolate**: the process is to run the baseline's code, but the project's environment may
   point into the workspace: an editable install (a ``.pth`` line naming ``src/``, or
   setuptools' and ``editables``' import finders mapping a package to the workspace's
   folder), ``PYTHONPATH``, a ``.pth`` file of the user's. Each such path that names a folder
   of the workspace is turned into the same folder of the baseline's worktree, where that
   folder exists there.
2. **Record**: every file the process opens (an import reads a module's source or its
   bytecode) that lies in the workspace, outside the worktree and axpipe's own folder, is
   appended to the record file, so the gate can tell whether the run read the change's files
   (bytecode read from ``PYTHONPYCACHEPREFIX`` is recorded as the source it stands for).
   The first line a process writes says that it loaded this hook.

Then the interpreter's own ``sitecustomize`` (the next one on ``sys.path``), if any, runs.
"""

from __future__ import annotations

import os
import sys
from typing import Any

_TOPS = [path for path in os.environ.get("AXPIPE_BASELINE_TOP", "").split(os.pathsep) if path]
_TREE = os.environ.get("AXPIPE_BASELINE_TREE", "")
_SKIP = [path for path in os.environ.get("AXPIPE_BASELINE_SKIP", "").split(os.pathsep) if path]
_RECORD = os.environ.get("AXPIPE_BASELINE_RECORD", "")
_HERE = os.path.dirname(os.path.abspath(__file__))


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _in_workspace(path: str) -> str | None:
    """``path`` (absolute) relative to the workspace's top, or None when it is not the
    workspace's (outside it, in the worktree, or in axpipe's folder)."""
    if any(_inside(path, folder) for folder in _SKIP):
        return None
    for top in _TOPS:
        if _inside(path, top):
            return os.path.relpath(path, top)
    return None


def _moved(path: Any) -> Any:
    """The worktree's folder for a workspace folder, or ``path`` itself."""
    if not isinstance(path, str) or not _TREE:
        return path
    relative = _in_workspace(os.path.abspath(path))
    if relative is None:
        return path
    there = os.path.normpath(os.path.join(_TREE, relative))
    return there if os.path.isdir(there) else path


def _isolate() -> None:
    sys.path[:] = [_moved(entry) for entry in sys.path]
    for module in list(sys.modules.values()):
        name = getattr(module, "__name__", "") or ""
        if name.startswith("__editable__"):  # setuptools' finders read these at each lookup
            mapping = getattr(module, "MAPPING", None)
            if isinstance(mapping, dict):
                for key, value in list(mapping.items()):
                    mapping[key] = _moved(value)
            namespaces = getattr(module, "NAMESPACES", None)
            if isinstance(namespaces, dict):
                for key, value in list(namespaces.items()):
                    namespaces[key] = [_moved(item) for item in value]
    for finder in sys.meta_path:  # `editables` (hatchling's exact dev mode)
        redirections = getattr(finder, "_redirections", None)
        if isinstance(redirections, dict):
            for key, value in list(redirections.items()):
                redirections[key] = _moved(value)


_seen: set[str] = set()
_busy: list[bool] = []


def _write(line: str) -> None:
    _busy.append(True)
    try:
        with open(_RECORD, "a", encoding="utf-8", errors="surrogateescape") as record:
            record.write(line + "\n")
    except OSError:
        pass
    finally:
        _busy.pop()


def _source_of_cached(path: str) -> str:
    """Under ``PYTHONPYCACHEPREFIX`` (axpipe's evidence environment sets it) an import reads
    ``<prefix>/<the source's folder>/<name>.cpython-311.pyc`` and not the source itself: the
    source it stands for is what the process ran."""
    prefix = (getattr(sys, "pycache_prefix", None) or "").rstrip(os.sep)
    if not prefix or not path.startswith(prefix + os.sep) or not path.endswith(".pyc"):
        return path
    folder, name = os.path.split(path[len(prefix):])
    return os.path.join(folder, name.split(".", 1)[0] + ".py")


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event != "open" or _busy or not args:
        return
    path = args[0]
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str):
        return  # a file descriptor
    path = _source_of_cached(os.path.abspath(path))
    if path in _seen:
        return
    _seen.add(path)
    if _in_workspace(path) is not None or _in_workspace(os.path.realpath(path)) is not None:
        _write("open " + path)


def _next_sitecustomize() -> None:
    """Run the sitecustomize this one hides (the interpreter's or the project's)."""
    import importlib.machinery
    import importlib.util

    rest = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


if _TREE and _RECORD:
    _write(f"python {os.getpid()} {sys.executable}")
    _isolate()
    if hasattr(sys, "addaudithook"):
        sys.addaudithook(_audit)
_next_sitecustomize()
