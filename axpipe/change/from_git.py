"""The change guards judge, from a git repository (a patch file: :mod:`axpipe.change.from_patch`).

* :func:`from_git`: a revision (commit or tree) against the working tree, untracked
  (non-ignored) files included, or against the index with ``staged``. One ``git diff``,
  one ``git ls-files`` and one ``git cat-file --batch`` whatever the size of the
  repository; only files a guard asked for (by suffix) are read.
* :func:`snapshot`: the working tree as a tree id, so a caller can diff against "before
  the agent ran" even if the agent commits.

Both also see the ignored files a test runner reads (:mod:`axpipe.change.runner_files`): a
``conftest.py`` hidden through ``.git/info/exclude`` still runs, so it is still judged.

Never changes the user's index, refs or files (``snapshot`` writes git objects only).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from axpipe import git as git_cli  # this module's own git() wraps it with input errors
from axpipe.change import unidiff
from axpipe.change.from_patch import hunks_between
from axpipe.change.ignore_rules import IgnoreRules, tracked_ignored
from axpipe.change.repolookup import GitLookup, decode, read_file
from axpipe.change.runner_files import from_listing, ignored_runner_files
from axpipe.change.runner_files import listing_command as ignored_listing
from axpipe.errors import InputError
from axpipe.interfaces import ChangedFile, ChangeSet

_SPECIAL_MODES = ("120000", "160000")  # symlinks and submodules have no text to judge


def git(root: Path, *args: str, input: bytes | None = None, env: dict[str, str] | None = None) -> bytes:
    """Run git in ``root`` and return stdout; a failure becomes an :class:`InputError`."""
    try:
        # literal_pathspecs=False: the pathspecs given here are axpipe's own (`*.py`, `:/`)
        completed = git_cli.run(root, *args, input=input, env=env, literal_pathspecs=False)
    except OSError as error:
        raise InputError(f"cannot run git: {error}") from error
    if completed.returncode != 0:
        message = completed.stderr.decode(errors="replace").strip().splitlines()
        name = next(arg for arg in args if not arg.startswith("-") and "=" not in arg)
        raise InputError(f"git {name} failed: {message[-1] if message else completed.returncode}")
    return completed.stdout


def repository_root(start: Path) -> Path:
    """The top of the git work tree holding ``start``; an input error outside one."""
    try:
        completed = git_cli.run(start, "rev-parse", "--show-toplevel")
    except OSError as error:
        raise InputError(f"cannot run git: {error}") from error
    if completed.returncode != 0:
        raise InputError(f"{start} is not inside a git repository, so there is no change against --base "
                         "(default HEAD) to judge; give the change as a diff with --patch FILE instead")
    return Path(git_cli.decode(completed.stdout.strip()))  # a folder that is not UTF-8 keeps its bytes


def resolve(root: Path, revision: str) -> str:
    """The tree id ``revision`` names (a commit, tag, tree or snapshot). ``HEAD`` of a
    repository without commits is the empty tree: everything in it is new."""
    if revision.startswith("-"):
        raise InputError(f"--base: '{revision}' is not a revision")
    completed = git_cli.text(root, "rev-parse", "--verify", "--quiet", f"{revision}^{{tree}}")
    if completed.returncode != 0 and revision == "HEAD" and _unborn(root):
        return git(root, "hash-object", "-t", "tree", os.devnull).decode().strip()
    if completed.returncode != 0:
        shallow = git_cli.text(root, "rev-parse", "--is-shallow-repository").stdout.strip() == "true"
        hint = ("; this is a shallow clone, which may simply not have it: fetch the history it lacks "
                "(git fetch --deepen=N or --unshallow)") if shallow else ""
        raise InputError(f"--base: unknown revision '{revision}' in {root} "
                         f"(a commit, branch, tag or tree id; see `git log`){hint}")
    return completed.stdout.strip()


def _wanted(suffixes: tuple[str, ...]) -> Callable[[str], bool]:
    return (lambda path: path.endswith(suffixes)) if suffixes else (lambda path: True)


def _unborn(root: Path) -> bool:
    """True in a repository whose current branch has no commit yet."""
    completed = git_cli.run(root, "rev-parse", "--verify", "--quiet", "HEAD")
    symbolic = git_cli.run(root, "symbolic-ref", "-q", "HEAD")
    return completed.returncode != 0 and symbolic.returncode == 0


def from_git(root: Path, revision: str = "HEAD", *, staged: bool = False,
             suffixes: tuple[str, ...] = ()) -> ChangeSet:
    """What changed from ``revision`` to the working tree (to the index with ``staged``),
    limited to paths ending in one of ``suffixes`` (all paths when empty). ``root`` may be
    any folder of the work tree: the change is the whole work tree's."""
    if revision.startswith("-"):
        raise InputError(f"--base: '{revision}' is not a revision")
    wanted = _wanted(suffixes)
    # pathspecs let git skip everything else; `:(top)` reads them from the top of the work
    # tree whatever folder git runs in, and `*` crosses folders in a plain pathspec
    specs = [f":(top)*{suffix}" for suffix in suffixes] or [":(top)"]
    args = ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--full-index", "-M",
            "--src-prefix=a/", "--dst-prefix=b/", "--ignore-submodules", *(["--cached"] if staged else [])]
    # The work tree's top and the revision, the diff and the two listings of the working
    # tree are independent: they run at once, so the wall time is that of the slowest, not
    # of the sum (a guard run per commit is within a few times `git diff --stat`,
    # docs/performance.md). Paths keep their bytes: git C-quotes names that are not ASCII in
    # the diff's headers (core.quotepath), which unquote() turns back into bytes
    # (surrogateescape), and -z lists them raw. A name that is not UTF-8 is still a file to
    # read and judge.
    # At the top of a work tree (`.git` there: the repair loop, a checkout) the top is known;
    # the revision is checked by the diff itself, and read again only when that fails.
    at_top = (root / ".git").exists()
    running = {"diff": _start(root, "-c", "core.quotepath=true", *args, revision, "--", *specs)}
    if not at_top:
        running["where"] = _start(root, "rev-parse", "--show-toplevel")
    if not staged:
        running["others"] = _start(root, "ls-files", "--full-name", "--others", "--exclude-standard", "-z", "--",
                                   *specs)
        running["ignored"] = git_cli.popen(root, *ignored_listing(), "--full-name", "--", ":/",
                                       stderr=subprocess.DEVNULL, literal_pathspecs=False)
    outputs = {name: (process.communicate()[0], process.returncode) for name, process in running.items()}
    if not at_top:
        where = os.fsdecode(outputs["where"][0]).splitlines()  # a top that is not UTF-8 keeps its bytes
        root = Path(where[0]) if outputs["where"][1] == 0 and where else repository_root(root)
    if outputs["diff"][1] != 0:
        tree = resolve(root, revision)  # the message for an unknown revision; the empty tree when unborn
        diff = git(root, "-c", "core.quotepath=true", *args, tree, "--", *specs)
    else:
        tree, diff = revision, outputs["diff"][0]  # `<revision>:<path>` names an old blob as well
    patches = unidiff.parse(diff.decode("utf-8", errors="replace"))
    untracked = [] if staged else [
        name for name in _checked(outputs["others"], "ls-files").decode("utf-8", errors="surrogateescape")
        .split("\0") if name] + (from_listing(root, outputs["ignored"][0]) if outputs["ignored"][1] == 0 else [])
    files, blobs = _pair(patches, untracked, wanted, tree)
    # staged: the new side is the index's blob, read in the same batch as the old ones
    staged_blobs = {patch.new_path: patch.new_blob or f":{patch.new_path}" for patch in patches
                    if staged and patch.new_path}
    texts = _cat_blobs(root, [*blobs.values(), *staged_blobs.values()])

    def read_new(path: str) -> str | None:
        return texts.get(staged_blobs.get(path, "")) if staged else read_file(root, path)

    for item in files:
        if item.old_path is not None and item.old_path in blobs:
            item.before = texts.get(blobs[item.old_path])
        if item.new_path is not None:
            item.after = read_new(item.new_path)
        item.binary = item.binary or (item.old_path is not None and item.before is None) or (
            item.new_path is not None and item.after is None)
        if not item.hunks and not item.binary:  # untracked files and pure renames: git showed no lines
            item.hunks = hunks_between(item.before or "", item.after or "")
    files = _renames(files)
    # a file in a snapshot that git does not track (untracked, or ignored and read by a
    # runner) shows as deleted, then comes back from the listing: unchanged, it is no change
    files = [item for item in files if item.hunks or item.binary or item.before != item.after
             or item.old_path != item.new_path]
    notes = [f"{item.path}: not judged (binary, a symlink, a submodule or over 2 MiB)"
             for item in files if item.binary]
    source = f"git diff {'--cached ' if staged else ''}{revision}"
    return ChangeSet(files=files, source=source, root=root, lookup=GitLookup(root), notes=notes)


def _start(root: Path, *args: str) -> subprocess.Popen[bytes]:
    try:
        return git_cli.popen(root, *args, stderr=subprocess.DEVNULL, literal_pathspecs=False)
    except OSError as error:
        raise InputError(f"cannot run git: {error}") from error


def _checked(output: tuple[bytes, int], name: str) -> bytes:
    if output[1] != 0:
        raise InputError(f"git {name} failed: exit code {output[1]}")
    return output[0]


def _renames(files: list[ChangedFile]) -> list[ChangedFile]:
    """A tracked file deleted and an untracked one with the same text is a rename (``mv``
    without ``git mv``: git's diff sees the deletion, the listing the new file)."""
    gone = {item.before: item for item in files if item.new_path is None and item.before and not item.binary}
    kept: list[ChangedFile] = []
    for item in files:
        match = gone.pop(item.after, None) if item.old_path is None and item.after else None
        if match is None:
            kept.append(item)
            continue
        match.new_path, match.after, match.hunks = item.new_path, item.after, []
    return kept


def _pair(patches: list[unidiff.FilePatch], untracked: list[str], wanted: Callable[[str], bool],
          tree: str) -> tuple[list[ChangedFile], dict[str, str]]:
    """Changed files to read, and the old blob of each old path (``tree:path`` when the diff
    names none: a pure rename has no ``index`` line). A path the revision has but the index
    does not, still on disk as an untracked file, is a modification, not a deletion plus a
    new file (this happens when the base is a snapshot)."""
    files: dict[str, ChangedFile] = {}
    blobs: dict[str, str] = {}
    for patch in patches:
        paths = [path for path in (patch.old_path, patch.new_path) if path]
        if not any(wanted(path) for path in paths):
            continue
        special = patch.new_mode in _SPECIAL_MODES or patch.old_mode in _SPECIAL_MODES
        item = ChangedFile(patch.old_path, patch.new_path, None, None, patch.hunks,
                           binary=patch.binary or special)
        if patch.old_path is not None and not item.binary:
            blobs[patch.old_path] = patch.old_blob or f"{tree}:{patch.old_path}"
        files[item.path] = item
    for path in untracked:
        if not wanted(path):
            continue
        deleted = files.get(path)
        if deleted is not None and deleted.new_path is None:
            deleted.new_path = path
            deleted.hunks = []  # recomputed below from the two texts
        elif path not in files:
            files[path] = ChangedFile(None, path, None, None, [])
    return list(files.values()), blobs


def _cat_blobs(root: Path, blobs: list[str]) -> dict[str, str | None]:
    wanted = sorted({blob for blob in blobs if blob.strip("0")})  # all zeros: no blob (a new file)
    if not wanted:
        return {}
    output = git(root, "cat-file", "--batch", input="".join(f"{blob}\n" for blob in wanted).encode())
    texts: dict[str, str | None] = {}
    position = 0
    for blob in wanted:
        header_end = output.index(b"\n", position)
        header = output[position:header_end].split()
        if len(header) < 3 or header[1] == b"missing":
            texts[blob] = None
            position = header_end + 1
            continue
        size = int(header[2])
        texts[blob] = decode(output[header_end + 1:header_end + 1 + size])
        position = header_end + 1 + size + 1
    return texts


def snapshot(root: Path, rules: IgnoreRules | None = None) -> str:
    """A tree id of the whole working tree as it is now (also from a subfolder of it):
    tracked files with their edits, untracked non-ignored files, and the ignored files a
    test runner reads (:func:`~axpipe.change.runner_files.ignored_runner_files`). Written through a copy
    of the index, so the user's index, refs and files are untouched. Pass it as the base of
    :func:`from_git` later.

    ``rules`` (:func:`axpipe.change.ignore_rules.capture`) replaces git's ignore rules of now with
    those of an earlier moment: a unit judges its end under the rules it started with, so
    editing a ``.gitignore`` or ``info/exclude`` neither exposes the user's ignored files nor
    hides new ones. Paths those rules ignore and that were not tracked then stay out even if
    they were staged since (``git add -f``).

    Index flags that make git skip a file (``--assume-unchanged``, ``--skip-worktree``) are
    cleared in the copy, so an edit hidden behind them is seen; a skip-worktree entry that is
    not on disk (a sparse checkout) keeps its flag, so absence is no deletion."""
    import shutil
    import tempfile  # only snapshots need it; `axpipe guard` starts without it

    # folders keep their bytes (os.fsdecode): a checkout may live under a folder that is not UTF-8
    git_dir, top = map(Path, os.fsdecode(git(root, "rev-parse", "--absolute-git-dir", "--show-toplevel")).splitlines())
    with tempfile.TemporaryDirectory(prefix="axpipe-snapshot-") as scratch:
        index = Path(scratch) / "index"
        if (git_dir / "index").exists():
            # copy2 keeps the index's mtime: git trusts an entry's stat only when the file is
            # older than the index, and a fresh mtime would hide same-size edits made in the
            # same second (git's "racy" entries).
            shutil.copy2(git_dir / "index", index)
        env = {"GIT_INDEX_FILE": str(index)}
        _unflag(top, env)
        # in a sparse checkout `git add` leaves out a path outside the sparse patterns even when
        # it is on disk (written since); --sparse takes it, and still skips the absent ones
        sparse = ["--sparse"] if _sparse_checkout(top) else []
        excludes: list[str] = []
        if rules is None:
            git(top, "add", *sparse, "--all", "--", ":/", env=env)  # `:/` is the top: an edit anywhere counts
        else:
            excludes = [f"--exclude-from={_write(Path(scratch) / 'exclude', rules.patterns)}"]
            git(top, "add", *sparse, "--update", "--", ":/", env=env)  # tracked files: no ignore rule applies
            staged = [path for path in tracked_ignored(top, rules.patterns, env) if path not in rules.tracked]
            _update(top, env, "--force-remove", staged)
            # without --exclude-standard, ls-files reads only the rules it is given
            _update(top, env, "--add", [name.rstrip("/") for name in _listed(
                git(top, "ls-files", "--others", "-z", *excludes, env=env))])
        # update-index takes the paths literally and whatever the ignore rules say
        _update(top, env, "--add", ignored_runner_files(top, excludes or None))
        return git(root, "write-tree", env=env).decode().strip()


def _sparse_checkout(top: Path) -> bool:
    completed = git_cli.text(top, "config", "--bool", "core.sparseCheckout")
    return completed.stdout.strip() == "true"


def _write(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


def _listed(output: bytes) -> list[str]:
    return [name for name in output.decode("utf-8", errors="surrogateescape").split("\0") if name]


def _update(top: Path, env: dict[str, str], mode: str, paths: list[str]) -> None:
    if paths:
        git(top, "update-index", mode, "-z", "--stdin", env=env,
            input="".join(f"{path}\0" for path in paths).encode("utf-8", errors="surrogateescape"))


def _unflag(top: Path, env: dict[str, str]) -> None:
    """Clear assume-unchanged and skip-worktree in the index copy ``env`` names, except on
    skip-worktree entries absent from disk (a sparse checkout leaves them out)."""
    assumed, skipped = [], []
    for entry in _listed(git(top, "ls-files", "-v", "-z", env=env)):
        tag, path = entry[0], entry[2:]
        if tag.islower():
            assumed.append(path)
        if tag in "Ss" and os.path.lexists(top / path):
            skipped.append(path)
    # one flag a call: update-index applies only the first of two such options to each path
    _update(top, env, "--no-assume-unchanged", assumed)
    _update(top, env, "--no-skip-worktree", skipped)
