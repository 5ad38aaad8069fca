"""The source fingerprint a receipt is bound to (DESIGN §4).

SHA-256 over the real bytes of the files under a goal's ``source_paths``:

* in git (at the top of a work tree or in a subfolder of one, as in a monorepo): tracked
  files and untracked, non-ignored files under folder paths (git's ignore rules hold),
  every explicitly named file even when ignored, and the files the agent edited during
  the goal;
* outside git: a recursive walk of the source paths, missing paths included.

Anything that could make the evidence lie gives **no fresh evidence** instead of a digest,
with the reason: symlinks, nested git repositories, special files, paths escaping the
workspace, files changing while hashed, unreadable files, and trees over the limits
(20,000 entries, 128 MiB). ``.axpipe/`` is never part of the source.

Re-fingerprinting is cheap because unchanged files are not read again:

* a tracked file git reports unchanged (``git status``: its worktree content is its index
  blob) takes its SHA-256 from a cache keyed by the blob id — content-addressed, so it
  cannot be stale; git's own index handles racily-clean entries. Only a file whose real
  bytes *are* its blob's bytes qualifies, so not one git converts on the way into the
  index (a ``filter``, ``text``/``eol``/``crlf``, ``ident`` or ``working-tree-encoding``
  attribute, or ``core.autocrlf``: git calls it clean while its bytes differ from the
  blob's), nor one marked ``assume-unchanged`` or ``skip-worktree`` (git stops looking at
  it). ``git status`` runs with the mode and stat checks on whatever the repository's
  config says (``core.fileMode``, ``core.trustctime``, ``core.checkStat``,
  ``core.fsmonitor``), so an executable bit or a change git was told to overlook still
  counts. A digest joins the blob cache only when the file was last changed before git
  looked at it;
* every other file (changed, untracked, explicitly named, outside git) uses a stat cache
  that, like git's index, trusts an entry only when the stat matches *and* the file's mtime
  is older than the moment the cache was started ("racy" entries are re-read).

Both live in ``.axpipe/fingerprint.cache``.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import stat
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import field
from pathlib import Path

from axpipe.records import record
from axpipe.workspace import STATE_DIR, check_ignore, git_prefix, git_top

MAX_ENTRIES = 20_000
MAX_BYTES = 128 * 1024 * 1024
CACHE_NAME = "fingerprint.cache"
_CACHE_VERSION = f"2-{sys.version_info[0]}.{sys.version_info[1]}"  # marshal's format follows Python
_MISSING = "missing"
Reason = Callable[[str], None]
"""Collects why there is no fresh evidence."""


@record
class Fingerprint:
    """A digest of the source, or the reasons there is none."""

    digest: str | None
    reasons: list[str] = field(default_factory=list)
    entries: int = 0
    bytes: int = 0
    hashed: int = 0  # files read this time (not taken from a cache)

    @property
    def fresh(self) -> bool:
        return self.digest is not None

    def describe(self) -> str:
        if self.digest is not None:
            return f"{self.digest[:12]} ({self.entries} files, {self.bytes} bytes)"
        return "no fresh evidence: " + "; ".join(self.reasons)


@record
class _Candidate:
    """A file to account for: where it was found and what git knows of it."""

    origin: str  # tracked | untracked | walked | explicit
    blob: str | None = None  # git's blob id when the worktree matches the index
    executable: bool = False


def _inside(relative: str) -> bool:
    normalized = os.path.normpath(relative)
    return not (os.path.isabs(normalized) or normalized == ".." or normalized.startswith(".." + os.sep))


def _is_state(relative: str) -> bool:
    return relative == STATE_DIR or relative.startswith(STATE_DIR + "/")


def compute(root: Path, source_paths: Iterable[str], *, extra_files: Iterable[str] = (),
            max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES,
            use_cache: bool = True, limit_names: tuple[str, str] | None = None) -> Fingerprint:
    """Fingerprint ``source_paths`` (relative to ``root``) plus ``extra_files``.

    ``limit_names`` names the settings ``max_entries`` and ``max_bytes`` came from (a
    recipe's ``limits.fingerprint_entries`` and ``limits.fingerprint_bytes``), so that the
    reason a tree is over one says which to raise."""
    root = root.resolve()
    base = str(root)
    reasons: list[str] = []

    def reason(text: str) -> None:
        if text not in reasons:
            reasons.append(text)

    folders: list[str] = []
    files: list[str] = []
    for source in source_paths:
        if not _inside(source):
            reason(f"path escapes the workspace: {source}")
            continue
        relative = os.path.normpath(source)
        real = os.path.realpath(root / relative)
        if real != base and not real.startswith(base + os.sep):
            reason(f"path escapes the workspace: {source} (resolves to {real})")
            continue
        (folders if relative == "." or (root / relative).is_dir() else files).append(relative)
    for extra in extra_files:
        if _inside(extra):
            files.append(os.path.normpath(extra))
        else:
            reason(f"path escapes the workspace: {extra}")
    # The cache's stamp is taken before git looks at the files (see _Cache.store).
    cache = _Cache(root / STATE_DIR / CACHE_NAME if use_cache else None)
    top = git_top(root)
    try:
        candidates = _git_candidates(root, git_prefix(root, top), folders, reason) if top is not None \
            else _walk_candidates(root, folders, reason, max_entries)
    except BaseException:
        cache.discard()
        raise
    for relative in files:
        if not _is_state(relative) and (relative not in candidates or candidates[relative].blob is None):
            candidates[relative] = _Candidate("explicit")
    named = tuple(f" ({name})" for name in limit_names) if limit_names else ("", "")
    if len(candidates) > max_entries:
        reason(f"more than {max_entries} entries under the source paths{named[0]}")
        cache.discard()
        return Fingerprint(None, reasons, len(candidates))
    entries, total, hashed = _digests(base, candidates, cache, reason)
    cache.save()
    if total > max_bytes:
        reason(f"more than {max_bytes} bytes of content under the source paths{named[1]}")
    if reasons:
        return Fingerprint(None, reasons, len(entries), total, hashed)
    summary = "".join(f"{relative}\0{kind}\0{digest}\n" for relative, (kind, digest) in sorted(entries.items()))
    # File names keep their bytes (surrogateescape): a name that is not UTF-8 is still a name.
    digest = hashlib.sha256(summary.encode("utf-8", "surrogateescape")).hexdigest()
    return Fingerprint(digest, [], len(entries), total, hashed)


def covering_source(root: Path, source_paths: Iterable[str], path: Path) -> str | None:
    """The source path whose fingerprint would include ``path``, a file axpipe is asked to
    write (``--event-log``), or None. Such a file would change the source with every line,
    so no receipt could ever stay fresh. As in :func:`compute`, ``.axpipe/`` never counts,
    nor a file git ignores inside a folder source path; a source path naming the file
    itself counts even then."""
    root = root.resolve()
    path = path.resolve()
    if not path.is_relative_to(root) or _is_state(path.relative_to(root).as_posix()):
        return None
    ignored: bool | None = None
    for source in source_paths:
        if not _inside(source):
            continue
        base = (root / os.path.normpath(source)).resolve()
        if path == base:
            return source
        if not path.is_relative_to(base):
            continue
        if ignored is None:
            ignored = git_top(root) is not None and check_ignore(root, str(path)) == 0
        if not ignored:
            return source
    return None


def refuse_judged_output(option: str, path: Path, root: Path, source_paths: Iterable[str]) -> None:
    """Raise an :class:`~axpipe.errors.InputError` naming ``option`` when a goal's run cannot
    write to ``path``: inside the source its fingerprint covers (see :func:`covering_source`),
    or anywhere in its git work tree that git does not ignore, where the scope and read-only
    contracts judge every new file an agent or reviewer unit leaves (in a monorepo that is
    also beside the project's folder). ``.axpipe/`` is always fine."""
    from axpipe.errors import InputError

    source = covering_source(root, source_paths, path)
    if source is not None:
        raise InputError(
            f"{option}: {path} is inside the goal's source (source path {source!r}): every event written "
            "to it would change the files the checks are verified on, so the goal could never complete; "
            f"write it under {STATE_DIR}/, outside the work tree, or to a path git ignores")
    top = git_top(root)
    path, root = path.resolve(), root.resolve()
    if top is None or not path.is_relative_to(top) or path.is_relative_to(root / STATE_DIR):
        return
    if check_ignore(root, str(path)) != 0:
        raise InputError(
            f"{option}: {path} is in the git work tree {top}, which the goal's scope and read-only contracts "
            "judge, and git does not ignore it: the file would count as a change of the goal's units; "
            f"write it under {STATE_DIR}/, outside the work tree, or to a path git ignores")


# Checks git's status would skip by the repository's config, turned back on: the mode
# (core.fileMode=false hides a lost executable bit), ctime and every stat field (a change
# that keeps size and mtime), and a file system monitor's word that nothing changed.
_STRICT_STATUS = ("-c", "core.fileMode=true", "-c", "core.trustctime=true", "-c", "core.checkStat=default",
                  "-c", "core.fsmonitor=false")
# Attributes under which git converts a file's bytes on the way into the index; ``text``
# unspecified converts only with core.autocrlf.
_CONVERTING = ("filter", "ident", "working-tree-encoding", "eol", "crlf")


def _git_all(root: Path, commands: list[tuple[list[str], bool]]) -> list[list[str]]:
    """Git commands run side by side; each one's NUL-separated output as text (file names
    keep their bytes through surrogateescape). Pathspecs are literal unless a command's
    flag says it uses pathspec magic; exit code 1 of ``git config --get`` means unset."""
    running = []
    for args, magic in commands:
        env = {**os.environ, "GIT_LITERAL_PATHSPECS": "0" if magic else "1"}
        running.append(subprocess.Popen(["git", *args], cwd=root, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE))
    outputs = []
    for process, (args, _) in zip(running, commands, strict=True):
        out, err = process.communicate()
        if process.returncode != 0 and not (args[0] == "config" and process.returncode == 1 and not err):
            raise RuntimeError(f"git {' '.join(args)} failed: {err.decode(errors='replace').strip()}")
        outputs.append(out.decode("utf-8", "surrogateescape").split("\0"))
    return outputs


def _converted_listing(folders: list[str], *, autocrlf: bool) -> tuple[list[str], bool]:
    """``git ls-files`` of the tracked files under ``folders`` git may convert on the way into
    the index, as a command for :func:`_git_all`: every file minus (``exclude`` magic, so the
    answer is short) those with none of the converting attributes. One exclude, not one
    per way of saying "no text conversion": each costs a pass over the attributes (a file
    marked ``-text`` or ``binary`` is just read like a converted one, which stays correct)."""
    text = "-text" if autocrlf else "!text"
    requirements = " ".join(f"!{name}" for name in _CONVERTING)
    specs = [f":(literal){folder}" for folder in folders]
    specs += [f":(exclude,attr:{requirements} {text}){folder}" for folder in folders]
    return ["ls-files", "-z", "--cached", "--", *specs], True


def _git_candidates(root: Path, prefix: str, folders: list[str], reason: Reason) -> dict[str, _Candidate]:
    """Tracked files with their blob ids, minus what git says changed and what git converts;
    plus untracked files.

    ``root`` may be a subfolder of the work tree (``prefix``, see
    :func:`~axpipe.workspace.git_prefix`): ``git ls-files`` prints paths relative to it,
    ``git status`` relative to the top. ``git status`` may refresh the index's stat data as
    it does when a person runs it; that is what keeps it (and so this) fast on the next call.
    """
    candidates: dict[str, _Candidate] = {}
    if not folders:
        return candidates
    specs = ["--", *folders]
    # Four git processes side by side; the converted listing assumes core.autocrlf is off
    # (the default), and is asked again in the rare repository where it is not.
    listing, status, converted, autocrlf = _git_all(root, [
        (["ls-files", "-z", "-s", "-v", "--cached", *specs], False),
        ([*_STRICT_STATUS, "status", "--porcelain=v2", "-z", "-uall", "--no-renames", *specs], False),
        _converted_listing(folders, autocrlf=False),
        (["config", "--get", "core.autocrlf"], False)])
    if autocrlf[0].strip().lower() not in ("", "false", "no", "off", "0"):
        converted = _git_all(root, [_converted_listing(folders, autocrlf=True)])[0]
    converts = set(converted)
    for line in listing:
        if not line:
            continue
        meta, _, relative = line.partition("\t")
        tag, mode, blob = meta[0], meta[2:8], meta[9:49]
        if mode == "160000":
            reason(f"nested git repository: {relative}")
        elif mode == "120000":
            reason(f"symlink: {relative}")
        elif not (relative == STATE_DIR or relative.startswith(STATE_DIR + "/")):
            # `assume-unchanged` (a lowercase tag) and `skip-worktree` (S) tell git not to
            # look at the file, so neither git status nor the index blob says what is on
            # disk: such a file is read like a changed one. So is a file git converts: its
            # blob is not its bytes, and git calls it clean when only the bytes it
            # converts away changed.
            trusted = tag == "H" and relative not in converts
            candidates[relative] = _Candidate("tracked", blob if trusted else None, mode == "100755")
    for line in status:
        if not line:
            continue
        kind = line[0]
        if kind == "?":
            relative = line[2:].removeprefix(prefix)
            if relative.endswith("/"):  # git lists a nested repository as an opaque folder
                reason(f"nested git repository: {relative.rstrip('/')}")
            elif not _is_state(relative):
                candidates[relative] = _Candidate("untracked")
        elif kind in "1u":
            fields = line.split(" ", 8 if kind == "1" else 10)
            relative = fields[-1].removeprefix(prefix)
            if (kind == "u" or fields[1][1] != ".") and relative in candidates:
                candidates[relative] = _Candidate("tracked")  # read it: the worktree is not the blob
    return candidates


def _walk_candidates(root: Path, folders: list[str], reason: Reason, max_entries: int) -> dict[str, _Candidate]:
    candidates: dict[str, _Candidate] = {}
    for folder in folders:
        for directory, subdirs, names in os.walk(root / folder):
            relative_dir = os.path.relpath(directory, root)
            if _is_state(relative_dir):
                subdirs[:] = []
                continue
            for sub in list(subdirs):
                sub_path = os.path.join(directory, sub)
                relative = os.path.normpath(os.path.join(relative_dir, sub))
                if _is_state(relative):
                    subdirs.remove(sub)
                elif os.path.islink(sub_path):
                    reason(f"symlink: {relative}")
                    subdirs.remove(sub)
                elif os.path.exists(os.path.join(sub_path, ".git")):
                    reason(f"nested git repository: {relative}")
                    subdirs.remove(sub)
            for name in names:
                candidates[os.path.normpath(os.path.join(relative_dir, name))] = _Candidate("walked")
            if len(candidates) > max_entries:
                return candidates  # over the limit: the caller says so
    return candidates


def _digests(base: str, candidates: dict[str, _Candidate], cache: _Cache,
             reason: Reason) -> tuple[dict[str, tuple[str, str]], int, int]:
    """Each candidate's (kind, digest), the content bytes counted, and how many were read."""
    entries: dict[str, tuple[str, str]] = {}
    total = 0
    to_read: list[tuple[str, os.stat_result, _Candidate]] = []
    for relative, candidate in candidates.items():
        if candidate.blob is not None:
            known = cache.by_blob(candidate.blob)
            if known is not None:
                digest, size = known
                entries[relative] = ("x" if candidate.executable else "f", digest)
                total += size
                continue
        path = base + os.sep + relative
        if candidate.origin == "explicit":
            # git and the walk never descend through a symlinked folder; a path named
            # explicitly (a source path, an edited file) could.
            real_parent = os.path.realpath(os.path.dirname(path))
            if real_parent != base and not real_parent.startswith(base + os.sep):
                reason(f"path escapes the workspace: {relative} (through a symlinked folder)")
                continue
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            entries[relative] = (_MISSING, "")
            continue
        except OSError as error:
            reason(f"unreadable file: {relative} ({error.strerror})")
            continue
        if stat.S_ISLNK(info.st_mode):
            reason(f"symlink: {relative}")
            continue
        if not stat.S_ISREG(info.st_mode):
            reason(f"special file: {relative}")
            continue
        kind = "x" if info.st_mode & 0o111 else "f"
        total += info.st_size
        cached = cache.by_stat(relative, info)
        if cached is not None:
            entries[relative] = (kind, cached)
            continue
        to_read.append((relative, info, candidate))
    if to_read:
        # One thread: on many small files, threads contend for the GIL and run ~3x slower.
        results = [_read_digest(base + os.sep + relative, info) for relative, info, _ in to_read]
        for (relative, info, candidate), (found, problem) in zip(to_read, results, strict=True):
            if found is None:
                reason(problem.format(path=relative))
                continue
            entries[relative] = ("x" if info.st_mode & 0o111 else "f", found)
            cache.store(relative, info, found, candidate.blob)
    return entries, total, len(to_read)


def _read_digest(path: str, info: os.stat_result) -> tuple[str | None, str]:
    """SHA-256 of the file, or (None, why) when it is unreadable or changes while read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as error:
        return None, f"unreadable file: {{path}} ({error.strerror})"
    try:
        digest = hashlib.sha256()
        read = 0
        # Read at most one byte past the size lstat saw: a file that grows is caught, not chased.
        while read <= info.st_size:
            chunk = os.read(fd, info.st_size + 1 - read)
            if not chunk:
                break
            read += len(chunk)
            digest.update(chunk)
        after = os.fstat(fd)
    except OSError as error:
        return None, f"unreadable file: {{path}} ({error.strerror})"
    finally:
        os.close(fd)
    if (read != info.st_size or after.st_size != info.st_size or after.st_mtime_ns != info.st_mtime_ns
            or after.st_ino != info.st_ino):
        return None, "file changed while hashing: {path}"
    return digest.hexdigest(), ""


class _Cache:
    """Digests by git blob id (content-addressed) and by path and stat (racy-aware)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.blobs: dict[str, tuple[str, int]] = {}
        self.used_blobs: dict[str, tuple[str, int]] = {}  # what this run saw: all the cache keeps
        self.old_stats: dict[str, tuple[int, int, int, int, str]] = {}
        self.old_stamp = 0
        self.stats: dict[str, tuple[int, int, int, int, str]] = {}
        self.stamp = 0
        if path is None:
            return
        try:
            version, stamp, stats, blobs = marshal.loads(path.read_bytes())
            if version == _CACHE_VERSION:
                self.old_stats, self.old_stamp, self.blobs = stats, stamp, blobs
        except (OSError, EOFError, ValueError, TypeError):
            pass  # no cache, or one we cannot read: hash everything
        # The cache's own time, taken on the file system (not the wall clock) before any file
        # is read: files modified after this moment carry an mtime at or above it.
        self.tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
        try:
            self.tmp.parent.mkdir(parents=True, exist_ok=True)
            self.tmp.write_bytes(b"")
            self.stamp = os.stat(self.tmp).st_mtime_ns
        except OSError:
            self.stamp = 0

    def by_blob(self, blob: str) -> tuple[str, int] | None:
        known = self.blobs.get(blob)
        if known is not None:
            self.used_blobs[blob] = known
        return known

    def by_stat(self, relative: str, info: os.stat_result) -> str | None:
        entry = self.old_stats.get(relative)
        if entry is None:
            return None
        size, mtime, ctime, inode, digest = entry
        if (size, mtime, ctime, inode) != (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino):
            return None
        if mtime >= self.old_stamp:  # racy: could have changed within the timestamp granularity
            return None
        self.stats[relative] = entry
        return digest

    def store(self, relative: str, info: os.stat_result, digest: str, blob: str | None) -> None:
        self.stats[relative] = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, digest)
        # git said this file is its blob; a file changed since the stamp (taken before git
        # looked) may have changed after, and its digest would then be filed under a blob
        # whose bytes it is not, for every later file with that blob.
        if blob is not None and max(info.st_mtime_ns, info.st_ctime_ns) < self.stamp:
            self.used_blobs[blob] = (digest, info.st_size)

    def discard(self) -> None:
        """Forget the stamp file: nothing is saved."""
        if self.stamp:
            self.tmp.unlink(missing_ok=True)

    def save(self) -> None:
        if self.path is None or not self.stamp:
            return
        if self.stats == self.old_stats and self.used_blobs == self.blobs and self.old_stamp:
            self.tmp.unlink(missing_ok=True)  # nothing new to remember: keep the older, stricter stamp
            return
        try:
            self.tmp.write_bytes(marshal.dumps((_CACHE_VERSION, self.stamp, self.stats, self.used_blobs)))
            os.replace(self.tmp, self.path)
        except OSError:
            self.tmp.unlink(missing_ok=True)
