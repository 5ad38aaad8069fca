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

* and when git answers exactly as it did for the last fingerprint (the same listing,
  status and converted files, byte for byte), the files git vouches for are the same
  blobs as then: only the other files are looked at, and when their digests are the
  same too, so is the result (the cache's memo, :mod:`axpipe.goal.fingerprint_cache`).

All three live in ``.axpipe/fingerprint.cache``.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import field
from pathlib import Path

from axpipe import git
from axpipe.errors import InputError
from axpipe.goal.fingerprint_cache import Cache, Memo
from axpipe.records import record
from axpipe.workspace import STATE_DIR, check_ignore, git_prefix, git_top

MAX_ENTRIES = 20_000
MAX_BYTES = 128 * 1024 * 1024
CACHE_NAME = "fingerprint.cache"
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
    # The cache's stamp is taken before git looks at the files (see Cache.store).
    cache = Cache(root / STATE_DIR / CACHE_NAME if use_cache else None)
    top = git_top(root)
    answers: _Answers | None = None
    try:
        if top is not None:
            answers = _git_answers(root, git_prefix(root, top), folders, files, keyed=use_cache)
    except BaseException:
        cache.discard()
        raise
    named = tuple(f" ({name})" for name in limit_names) if limit_names else ("", "")
    memo = cache.memo(answers.key) if answers is not None and not reasons else None
    if memo is not None and memo.entries > max_entries:
        memo = None  # a lower limit this time: say so the usual way
    if memo is not None:
        # git answered exactly as when the memo was made: the same candidates. Look at the
        # files git does not vouch for again; the rest are the same blobs as then.
        others = {relative: _Candidate(origin) for relative, (origin, _, _) in memo.others.items()}
        entries, total, hashed = _digests(base, others, cache, reason)
        if not reasons and entries == {relative: (kind, digest) for relative, (_, kind, digest)
                                       in memo.others.items()}:
            cache.keep_blobs()
            cache.remember(memo)
            cache.save()
            total += memo.trusted_bytes
            if total > max_bytes:
                reason(f"more than {max_bytes} bytes of content under the source paths{named[1]}")
                return Fingerprint(None, reasons, memo.entries, total, hashed)
            return Fingerprint(memo.digest, [], memo.entries, total, hashed)
    try:
        candidates = _git_candidates(answers, reason) if answers is not None \
            else _walk_candidates(root, folders, reason, max_entries)
    except BaseException:
        cache.discard()
        raise
    for relative in files:
        if not _is_state(relative) and (relative not in candidates or candidates[relative].blob is None):
            candidates[relative] = _Candidate("explicit")
    if len(candidates) > max_entries:
        reason(f"more than {max_entries} entries under the source paths{named[0]}")
        cache.discard()
        return Fingerprint(None, reasons, len(candidates))
    if memo is not None:  # the other files are already looked at: only the rest is left
        rest = {relative: candidate for relative, candidate in candidates.items() if relative not in others}
        more, more_total, more_hashed = _digests(base, rest, cache, reason)
        entries.update(more)
        total, hashed = total + more_total, hashed + more_hashed
    else:
        entries, total, hashed = _digests(base, candidates, cache, reason)
    if total > max_bytes:
        reason(f"more than {max_bytes} bytes of content under the source paths{named[1]}")
    if reasons:
        cache.save()
        return Fingerprint(None, reasons, len(entries), total, hashed)
    summary = "".join(f"{relative}\0{kind}\0{digest}\n" for relative, (kind, digest) in sorted(entries.items()))
    # File names keep their bytes (surrogateescape): a name that is not UTF-8 is still a name.
    digest = hashlib.sha256(summary.encode("utf-8", "surrogateescape")).hexdigest()
    if answers is not None and use_cache:
        _remember(cache, answers.key, digest, candidates, entries)
    cache.save()
    return Fingerprint(digest, [], len(entries), total, hashed)


def _remember(cache: Cache, key: bytes, digest: str, candidates: dict[str, _Candidate],
              entries: dict[str, tuple[str, str]]) -> None:
    """Keep this result as the memo when every file git vouches for took its digest from the
    blob cache (or joined it): then a later run with the same answers from git gets the same
    digests for them without looking. A racy file (changed around when git looked) is not in
    the blob cache, so its result is not remembered."""
    trusted_bytes = 0
    others: dict[str, tuple[str, str, str]] = {}
    for relative, candidate in candidates.items():
        if candidate.blob is None:
            others[relative] = (candidate.origin, *entries[relative])
            continue
        known = cache.used_blobs.get(candidate.blob)
        if known is None:
            return
        trusted_bytes += known[1]
    cache.remember(Memo(key, digest, len(entries), trusted_bytes, others))


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


def _git_all(root: Path, commands: list[tuple[list[str], bool]]) -> list[bytes]:
    """Git commands run side by side; each one's output. Pathspecs are literal unless a
    command's flag says it uses pathspec magic; exit code 1 of ``git config --get`` means
    unset."""
    running = []
    for args, magic in commands:
        running.append(git.popen(root, *args, literal_pathspecs=not magic))
    outputs = []
    for process, (args, _) in zip(running, commands, strict=True):
        out, err = process.communicate()
        if process.returncode != 0 and not (args[0] == "config" and process.returncode == 1 and not err):
            raise RuntimeError(f"git {' '.join(args)} failed: {err.decode(errors='replace').strip()}")
        outputs.append(out)
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


@record
class _Answers:
    """What git said about the folders, byte for byte: everything the candidates are
    computed from (with the prefix and the explicitly named files), and its hash, the key of
    the cache's memo (see :mod:`axpipe.goal.fingerprint_cache`)."""

    prefix: str
    listing: bytes  # ls-files -s -v: mode, blob and flag tag of each tracked file
    status: bytes  # strict git status: what differs from the index, and untracked files
    converted: bytes  # ls-files of the tracked files git may convert
    key: bytes


def _git_answers(root: Path, prefix: str, folders: list[str], files: list[str], *, keyed: bool) -> _Answers:
    """Ask git about ``folders`` (see :func:`_git_candidates`); the key only when ``keyed``
    (a fingerprint without the cache has no memo to look up).

    ``root`` may be a subfolder of the work tree (``prefix``, see
    :func:`~axpipe.workspace.git_prefix`): ``git ls-files`` prints paths relative to it,
    ``git status`` relative to the top. ``git status`` may refresh the index's stat data as
    it does when a person runs it; that is what keeps it (and so this) fast on the next call.
    """
    listing = status = converted = b""
    autocrlf = False
    if folders:
        specs = ["--", *folders]
        # Four git processes side by side; the converted listing assumes core.autocrlf is off
        # (the default), and is asked again in the rare repository where it is not.
        listing, status, converted, setting = _git_all(root, [
            (["ls-files", "-z", "-s", "-v", "--cached", *specs], False),
            ([*_STRICT_STATUS, "status", "--porcelain=v2", "-z", "-uall", "--no-renames", *specs], False),
            _converted_listing(folders, autocrlf=False),
            (["config", "--get", "core.autocrlf"], False)])
        autocrlf = setting.strip().lower() not in (b"", b"false", b"no", b"off", b"0")
        if autocrlf:
            converted = _git_all(root, [_converted_listing(folders, autocrlf=True)])[0]
        status = _without_state(status, prefix)
    if not keyed:
        return _Answers(prefix, listing, status, converted, b"")
    # Lengths first, so that where one answer ends and the next begins is part of the key.
    head = repr((prefix, folders, files, autocrlf, len(listing), len(status), len(converted)))
    key = hashlib.sha256(head.encode("utf-8", "surrogateescape"))
    for answer in (listing, status, converted):
        key.update(answer)
    return _Answers(prefix, listing, status, converted, key.digest())


def _without_state(status: bytes, prefix: str) -> bytes:
    """``git status``'s answer without the records of files in ``.axpipe/``, which never
    become candidates (see :func:`_git_candidates`): among them the cache itself and its
    stamp file, named by process id, which would make every answer new. A folder there git
    calls untracked, a nested repository, stays: it is a reason for no fresh evidence."""
    state = (prefix + STATE_DIR + "/").encode("utf-8", "surrogateescape")
    if state not in status:
        return status
    kept = []
    for entry in status.split(b"\0"):
        kind = entry[:1]
        if kind == b"?":
            if entry[2:].startswith(state) and not entry.endswith(b"/"):
                continue
        elif kind in (b"1", b"u") and entry.split(b" ", 8 if kind == b"1" else 10)[-1].startswith(state):
            continue
        kept.append(entry)
    return b"\0".join(kept)


def _text(answer: bytes) -> list[str]:
    """A NUL-separated answer as text: file names keep their bytes through surrogateescape."""
    return answer.decode("utf-8", "surrogateescape").split("\0")


def _git_candidates(answers: _Answers, reason: Reason) -> dict[str, _Candidate]:
    """Tracked files with their blob ids, minus what git says changed and what git converts;
    plus untracked files."""
    candidates: dict[str, _Candidate] = {}
    prefix = answers.prefix
    converts = set(_text(answers.converted))
    for line in _text(answers.listing):
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
    for line in _text(answers.status):
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


def _digests(base: str, candidates: dict[str, _Candidate], cache: Cache,
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
        kind = _kind(candidate, info)
        total += info.st_size
        cached = cache.by_stat(relative, info)
        if cached is not None:
            entries[relative] = (kind, cached)
            if candidate.blob is not None:
                cache.vouch(candidate.blob, info, cached)
            continue
        to_read.append((relative, info, candidate))
    if to_read:
        # One thread: on many small files, threads contend for the GIL and run ~3x slower.
        results = [_read_digest(base + os.sep + relative, info) for relative, info, _ in to_read]
        for (relative, info, candidate), (found, problem) in zip(to_read, results, strict=True):
            if found is None:
                reason(problem.format(path=relative))
                continue
            entries[relative] = (_kind(candidate, info), found)
            cache.store(relative, info, found, candidate.blob)
    return entries, total, len(to_read)


def _kind(candidate: _Candidate, info: os.stat_result) -> str:
    """``x`` for an executable file, else ``f``. For a file git vouches for, git's mode, as
    when its digest comes from the blob cache without a look at the file: git records
    100755 only for the owner's bit (a file that is 654 is 100644 and clean), so the
    digest does not depend on whether the cache had the blob."""
    if candidate.blob is not None:
        return "x" if candidate.executable else "f"
    return "x" if info.st_mode & 0o111 else "f"


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
