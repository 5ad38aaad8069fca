"""Where a project lives: its root, its ``axpipe.yaml`` and its ``.axpipe/`` state folder.

The root is the nearest folder, from the current directory up, holding ``axpipe.yaml`` or
``.git``; outside both it is the current directory. Everything axpipe writes goes under
``<root>/.axpipe/``, which is added to git's ``info/exclude`` the first time it is created
so that axpipe's own files never show up in ``git status`` nor in a fingerprint.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from axpipe import git
from axpipe.errors import ConfigError, InputError, Problem

STATE_DIR = ".axpipe"
STORE_FILE = "state.db"
PROJECT_FILE = "axpipe.yaml"


def find_root(start: Path | None = None) -> Path:
    """The project root for ``start`` (default: the current directory)."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / PROJECT_FILE).is_file() or (candidate / ".git").exists():
            return candidate
    return here


def output_path(value: str, option: str, *, folder: bool = False) -> Path:
    """``value`` as the absolute file (or ``folder``) an option writes to, checked before any
    work starts: a path that cannot be written is an :class:`InputError` naming ``option``,
    not a crash after the run. Missing parent folders are allowed (they are created when
    the output is written), but not under a file or in a folder that cannot be written."""
    path = Path(value).resolve()
    if path.exists() and path.is_dir() != folder:
        wanted = "a folder" if folder else "a file path"
        raise InputError(f"{option}: {value} is {'a folder' if path.is_dir() else 'a file'}; give {wanted}")
    if path.exists() and not folder:  # appended to: the file must be writable, not its folder
        if not os.access(path, os.W_OK):
            raise InputError(f"{option}: {value}: cannot write it (permission denied)")
        return path
    existing = path if folder else path.parent
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise InputError(f"{option}: {value} would be under {existing}, which is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(f"{option}: {value}: cannot write in {existing} (permission denied)")
    return path


def git_top(root: Path) -> Path | None:
    """The top of the git work tree ``root`` belongs to, or None when git does not see it.

    Usually ``root`` holds ``.git`` itself (one stat). A project whose ``axpipe.yaml`` sits in
    a subfolder of a repository (a monorepo) belongs to the repository above it; git is asked
    once to confirm, because it may disagree with a plain search for ``.git``
    (``GIT_CEILING_DIRECTORIES``, a repository owned by another user) and because a folder
    the repository ignores is outside git: git would list none of its files.
    """
    root = root.resolve()
    if "GIT_DIR" in os.environ or "GIT_WORK_TREE" in os.environ:
        return _top_told_to_git(root)
    if (root / ".git").exists():
        return root
    top = next((folder for folder in root.parents if (folder / ".git").exists()), None)
    if top is None:
        return None
    if (root, top) not in _seen_by_git:
        _seen_by_git[(root, top)] = _git_sees(root)
    return top if _seen_by_git[(root, top)] else None


_seen_by_git: dict[tuple[Path, Path], bool] = {}


def _top_told_to_git(root: Path) -> Path | None:
    """The top when ``GIT_DIR`` or ``GIT_WORK_TREE`` is set (git exports ``GIT_DIR`` to hooks):
    git's own answer then, not a search for ``.git``. With ``GIT_DIR`` alone, git takes the
    current folder for the top, and every snapshot, diff and restore must agree with it."""
    told = git.toplevel(root)
    if told is None:
        return None
    top = told.resolve()
    return top if top == root or _git_sees(root) else None


def _git_sees(folder: Path) -> bool:
    return check_ignore(folder, ".") == 1


def check_ignore(cwd: Path, path: str) -> int:
    """``git check-ignore -q PATH`` run in ``cwd``: 0 when git ignores ``path``, 1 when it
    does not, 128 when git cannot answer (no repository; 128 too when git cannot run). Give
    an absolute path for a name that may start with ``:`` (pathspec magic)."""
    try:  # check-ignore refuses to run at all under GIT_LITERAL_PATHSPECS=1
        return git.run(cwd, "check-ignore", "-q", "--", path, literal_pathspecs=False).returncode
    except OSError:
        return 128


def git_prefix(root: Path, top: Path) -> str:
    """``root`` relative to the top of its work tree, as git writes paths: ``""`` at the top,
    else ending in ``/``. Commands run in ``root`` take pathspecs relative to it, but some
    (``git status``, ``git diff``) print paths relative to the top."""
    relative = root.resolve().relative_to(top).as_posix()
    return "" if relative == "." else relative + "/"


def from_top(path: str, prefix: str) -> str:
    """A path git printed from the top of the work tree, as seen from the project folder
    ``prefix`` (see :func:`git_prefix`): with ``services/api/``, ``services/api/x.py`` is
    ``x.py`` and ``lib/y.py`` is ``../../lib/y.py``. Unchanged at the top (``prefix`` ``""``).
    Paths outside the folder keep their ``../`` rather than being dropped: a change there
    is still a change a person must see."""
    if path.startswith(prefix):
        return path[len(prefix):]
    import posixpath

    # as tools running in the folder print it: with `a/b/`, `a/z.py` is `../z.py`
    return posixpath.relpath("/" + path, "/" + prefix)  # absolute: no dependence on the cwd


def is_git_repository(root: Path) -> bool:
    """Whether ``root`` is in a git work tree (at its top or in a subfolder of it)."""
    return git_top(root) is not None


def state_dir(root: Path) -> Path:
    """``<root>/.axpipe``; not created here."""
    return root / STATE_DIR


def store_path(root: Path) -> Path:
    """``<root>/.axpipe/state.db``, the project's store; the one place its path is built."""
    return state_dir(root) / STORE_FILE


def ensure_state_dir(root: Path) -> Path:
    """Create ``.axpipe/`` if needed and keep it out of git's view."""
    path = state_dir(root)
    path.mkdir(parents=True, exist_ok=True)
    if is_git_repository(root):
        exclude_from_git(root, f"/{STATE_DIR}/")
    return path


def exclude_from_git(root: Path, pattern: str) -> None:
    """Add ``pattern`` (anchored at ``root``: it starts with ``/``) to the repository's
    ``info/exclude`` unless it is there already. In a subfolder of the work tree the pattern
    is anchored there: ``/.axpipe/`` becomes ``/services/api/.axpipe/``."""
    top = git_top(root)
    if top is None:
        return
    if (top / ".git").is_dir():
        exclude = top / ".git" / "info" / "exclude"
    else:  # a worktree or submodule: `.git` is a file pointing elsewhere; ask git
        try:
            completed = git.run(top, "rev-parse", "--git-path", "info/exclude")
        except OSError:
            return  # no git: nothing to hide from
        if completed.returncode != 0:
            return  # not a usable repository; nothing to hide from
        exclude = Path(git.decode(completed.stdout.strip()))
        if not exclude.is_absolute():
            exclude = top / exclude
    prefix = git_prefix(root, top)
    if prefix:
        pattern = "/" + _ignore_literal(prefix.rstrip("/")) + pattern
    # surrogateescape: a folder name that is not UTF-8 is written back as its own bytes
    existing = exclude.read_text(encoding="utf-8", errors="surrogateescape") if exclude.exists() else ""
    if pattern in existing.splitlines():
        return
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with exclude.open("a", encoding="utf-8", errors="surrogateescape") as handle:
        if existing and not existing.endswith("\n"):
            handle.write("\n")
        handle.write(f"{pattern}\n")


def _ignore_literal(path: str) -> str:
    """``path`` as a gitignore pattern that matches it and nothing else: glob characters and
    trailing spaces escaped (a leading ``#`` or ``!`` cannot occur: patterns start with ``/``)."""
    escaped = re.sub(r"([\\*?\[])", r"\\\1", path)
    stripped = escaped.rstrip(" ")
    return stripped + "\\ " * (len(escaped) - len(stripped))


class ProjectConfig:
    """The project's own settings from ``<root>/axpipe.yaml`` (all optional)."""

    def __init__(self, root: Path, recipe_paths: list[Path] | None = None, file: Path | None = None,
                 store_url: str | None = None) -> None:
        self.root = root
        self.recipe_paths = list(recipe_paths or [])
        self.file = file
        self.store_url = store_url  # ``store.url``: a PostgreSQL store instead of .axpipe/state.db


_PROJECT_KEYS = ("recipe_paths", "store")


def load_project(root: Path) -> ProjectConfig:
    """Read ``axpipe.yaml``; every problem is a config error naming the file and key."""
    path = root / PROJECT_FILE
    if not path.is_file():
        return ProjectConfig(root=root)

    source = str(path)
    text = path.read_text(encoding="utf-8")
    data = _simple_project_file(text)
    if data is None:
        import yaml

        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as error:
            raise ConfigError([Problem("", f"not valid YAML: {error}", source)]) from error
    problems: list[Problem] = []
    if not isinstance(data, dict):
        raise ConfigError([Problem("", "expected a mapping at the top level", source)])
    for key in data:
        if key not in _PROJECT_KEYS:
            problems.append(Problem(str(key), f"unknown key; allowed keys: {', '.join(_PROJECT_KEYS)}", source))
    raw_paths = data.get("recipe_paths", []) or []
    if isinstance(raw_paths, str):
        raw_paths = [raw_paths]
    recipe_paths: list[Path] = []
    if not isinstance(raw_paths, list):
        problems.append(Problem("recipe_paths", "expected a list of folders", source))
        raw_paths = []
    for index, entry in enumerate(raw_paths):
        if not isinstance(entry, str):
            problems.append(Problem(f"recipe_paths[{index}]", f"expected a folder path, got {entry!r}", source))
            continue
        folder = (root / os.path.expanduser(entry)).resolve()
        if not folder.is_dir():
            problems.append(Problem(f"recipe_paths[{index}]", f"folder {entry!r} does not exist", source))
            continue
        recipe_paths.append(folder)
    store_url = _store_url(data.get("store"), source, problems)
    if problems:
        raise ConfigError(problems)
    return ProjectConfig(root=root, recipe_paths=recipe_paths, file=path, store_url=store_url)


def _store_url(section: object, source: str, problems: list[Problem]) -> str | None:
    """``store: {url: postgresql://...}``; None (the SQLite file) when absent."""
    if section is None:
        return None
    if not isinstance(section, dict) or set(section) - {"url"}:
        problems.append(Problem("store", "expected a mapping with the one key 'url'", source))
        return None
    url = section.get("url")
    if url is None:
        return None
    if not isinstance(url, str) or not url.startswith(("postgresql://", "postgres://")):
        problems.append(Problem("store.url", f"expected a postgresql:// URL, got {url!r}", source))
        return None
    return url


_PLAIN_ITEM = r"[A-Za-z0-9_./~-]+"
_FLOW_LIST = re.compile(rf"^recipe_paths:\s*\[\s*((?:{_PLAIN_ITEM}\s*,\s*)*{_PLAIN_ITEM})?\s*\]\s*$")
_BLOCK_KEY = re.compile(r"^recipe_paths:\s*$")
_BLOCK_ITEM = re.compile(rf"^(\s+)-\s+({_PLAIN_ITEM})\s*$")


def _simple_project_file(text: str) -> dict[str, list[str]] | None:
    """Read the common shapes of ``axpipe.yaml`` without the YAML parser, else None.

    Only ``recipe_paths`` as a flow list (``[a, b]``) or a block list of plain folder names,
    plus blank and comment lines, are read here; anything else returns None and goes to
    PyYAML, whose import alone costs a third of the ``recipes list`` start-up budget.
    """
    paths: list[str] | None = None
    in_block = False
    indent: str | None = None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if in_block and (item := _BLOCK_ITEM.match(line)) and indent in (None, item.group(1)):
            assert paths is not None
            indent = item.group(1)  # every item at the first one's indentation, or YAML decides
            paths.append(item.group(2))
            continue
        if paths is not None:
            return None  # a second key, or anything unexpected: let YAML decide
        if flow := _FLOW_LIST.match(line):
            paths = [part.strip() for part in (flow.group(1) or "").split(",") if part.strip()]
            continue
        if _BLOCK_KEY.match(line):
            paths, in_block = [], True
            continue
        return None
    if paths is not None and any(_yaml_would_retype(item) for item in paths):
        return None
    return {"recipe_paths": paths or []} if paths is not None else {}


def _yaml_would_retype(item: str) -> bool:
    """Plain words YAML reads as something other than a string (null, booleans, numbers)."""
    lowered = item.lower()
    if lowered in ("~", "null", "true", "false", "yes", "no", "on", "off", "y", "n"):
        return True
    return bool(re.fullmatch(r"[-+]?(\d[\d_]*)?(\.\d*)?([eE][-+]?\d+)?|0[xob][\da-fA-F_]+|\.inf|\.nan", lowered))
