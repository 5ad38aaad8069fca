"""Git's ignore rules as they stood when a unit started, kept so later snapshots apply them again.

A unit's agent can change what git ignores: edit a ``.gitignore``, add a line to
``.git/info/exclude``. Judged under the new rules, a snapshot of the tree would see the
user's ignored files (``.venv/``, ``local.env``) as created by the unit, and would not
see a new file the agent hid. So a unit takes every snapshot (:func:`axpipe.change.from_git.snapshot`)
under the rules captured here, before the agent ran.

git reads its rules from ``core.excludesFile``, ``$GIT_DIR/info/exclude`` and a
``.gitignore`` in each folder it walks, and ``git add`` cannot be told to read other ones.
``git ls-files --others --exclude-from=FILE`` can (without ``--exclude-standard`` it reads
nothing else), so :func:`capture` writes all of them as one file with git's own precedence:
patterns are tried last to first, and git tries a deeper ``.gitignore`` before a shallower
one, ``.gitignore`` files before ``info/exclude``, and that before ``core.excludesFile``.
A pattern of ``dir/.gitignore`` is anchored at ``dir``: ``/dir/<pattern>`` when it holds a
slash (git's "relative to the file"), ``/dir/**/<pattern>`` when not (any depth below it).
The start and end snapshots of a unit both use the one file, so the two agree even where
the translation could differ from git in some corner.

Not translated: a ``.gitignore`` git reads from the index because sparse checkout left it
out of the working tree (the folder is not on disk either), and one that is a symlink (git
refuses to follow those).

Two of those files are outside the work tree: ``info/exclude`` and the ``core.excludesFile``.
No snapshot sees a change to them, yet a line the agent adds there would stay and hide
files from the goal's next unit and from fingerprints. So their bytes at the start are kept
too (:attr:`IgnoreRules.outside`), and :func:`restore_outside` puts them back after the
unit's work and again when the unit ends, keeping what the unit wrote as evidence.
"""

from __future__ import annotations

import os
from pathlib import Path

from axpipe import git
from axpipe.records import record

_BOM = b"\xef\xbb\xbf"


@record(frozen=True)
class IgnoreRules:
    """One exclude file equivalent to git's ignore rules at a moment, and the paths that
    were tracked although those rules match them (they stay in a snapshot)."""

    patterns: bytes
    tracked: frozenset[str]
    outside: tuple[tuple[str, bytes | None], ...] = ()  # ignore files outside the work tree: path, bytes (None: absent)


def _git(top: Path, *args: str) -> bytes:
    completed = git.run(top, *args, literal_pathspecs=False, optional_locks=False)
    return completed.stdout if completed.returncode == 0 else b""


def _names(output: bytes) -> list[str]:
    return [name for name in output.decode("utf-8", errors="surrogateescape").split("\0") if name]


def _excludes_file(top: Path) -> Path | None:
    configured = _git(top, "config", "--path", "core.excludesFile").decode(errors="surrogateescape").strip()
    if configured:
        return Path(configured) if Path(configured).is_absolute() else top / configured
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "git" / "ignore"


def _read(path: Path) -> bytes:
    try:
        if path.is_symlink() or not path.is_file():
            return b""
        content = path.read_bytes()
    except OSError:
        return b""
    content = content.removeprefix(_BOM)  # git skips a BOM at the start of each file
    return content if not content or content.endswith(b"\n") else content + b"\n"


def _literal(folder: str) -> bytes:
    """``folder`` as the literal start of a pattern: glob characters escaped."""
    out = bytearray()
    for byte in os.fsencode(folder):
        if byte in b"\\*?[":
            out += b"\\"
        out.append(byte)
    return bytes(out)


def _trim(line: bytes) -> bytes:
    """git's trim_trailing_spaces: trailing spaces go, except one a backslash escapes."""
    last_space = None
    position = 0
    while position < len(line):
        byte = line[position]
        if byte == 0x20:
            last_space = position if last_space is None else last_space
        else:
            if byte == 0x5C:  # a backslash escapes the next byte, a space too
                position += 1
                if position == len(line):
                    return line
            last_space = None
        position += 1
    return line if last_space is None else line[:last_space]


def anchored(content: bytes, folder: str) -> bytes:
    """The patterns of ``folder``'s ``.gitignore`` rewritten to apply from the top of the work tree."""
    prefix = b"/" + _literal(folder) + b"/"
    out = []
    for raw in content.split(b"\n"):
        line = _trim(raw.removesuffix(b"\r"))
        if not line or line.startswith(b"#"):
            continue
        negate, body = (b"!", line[1:]) if line.startswith(b"!") else (b"", line)
        if not body.strip(b"/"):
            continue
        if b"/" in body.removesuffix(b"/"):  # relative to the file's folder
            out.append(negate + prefix + body.removeprefix(b"/"))
        else:  # a name: at any depth below the folder
            out.append(negate + prefix + b"**/" + body)
    return b"".join(line + b"\n" for line in out)


def _raw(path: Path) -> bytes | None:
    """The bytes of the file at ``path`` as they are, None when there is no file (a folder or
    a symlink in its place is read as git reads it: no rules)."""
    try:
        return None if path.is_symlink() or not path.is_file() else path.read_bytes()
    except OSError:
        return None


def outside_files(top: Path) -> list[Path]:
    """The ignore files git reads from outside the work tree at ``top``: the
    ``core.excludesFile`` and ``$GIT_DIR/info/exclude``."""
    files = [path for path in (_excludes_file(top),) if path is not None]
    exclude = _git(top, "rev-parse", "--git-path", "info/exclude").decode(errors="surrogateescape").strip()
    if exclude:
        files.append(Path(exclude) if Path(exclude).is_absolute() else top / exclude)
    return files


def capture(top: Path, always: tuple[str, ...] = ()) -> IgnoreRules:
    """The ignore rules of the work tree at ``top`` now; ``always`` adds patterns that win over
    every rule (axpipe's own state folder)."""
    outside = tuple((str(path), _raw(path)) for path in outside_files(top))
    parts = [_read(Path(path)) for path, _ in outside]
    listed = _names(_git(top, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                         ":(top,glob)**/.gitignore"))
    found = sorted({name for name in listed if name.rsplit("/", 1)[-1] == ".gitignore"},
                   key=lambda name: (name.count("/"), name))
    for name in found:
        content = _read(top / name)
        folder = name.rpartition("/")[0]
        parts.append(anchored(content, folder) if folder else content)
    parts.extend(pattern.encode("utf-8", errors="surrogateescape") + b"\n" for pattern in always)
    patterns = b"".join(parts)
    return IgnoreRules(patterns, frozenset(tracked_ignored(top, patterns)), outside)


def restore_outside(rules: IgnoreRules, keep: Path) -> list[str]:
    """Put the ignore files outside the work tree back as :func:`capture` found them; copy
    each changed one (as it was changed, or an empty note that it was deleted) into ``keep``.
    Return the paths that had changed (with why, for one that could not be put back)."""
    changed = []
    for number, (name, before) in enumerate(rules.outside):
        path = Path(name)
        now = _raw(path)
        if now == before:  # a symlink or folder there, then and now, is no file git reads rules from
            continue
        keep.mkdir(parents=True, exist_ok=True)
        (keep / f"{number}-{path.name}{'.deleted' if now is None else ''}").write_bytes(now or b"")
        try:
            if before is None:
                path.unlink()  # the unit made it: there was none
            else:
                if path.is_symlink():
                    path.unlink()
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(before)  # in place: the file keeps its permissions
        except OSError as error:
            changed.append(f"{name} (could not be put back: {error.strerror})")
            continue
        changed.append(name)
    return changed


def tracked_ignored(top: Path, patterns: bytes, env: dict[str, str] | None = None) -> list[str]:
    """Index entries (of the index ``env`` names, else the repository's) that ``patterns`` match."""
    import tempfile

    with tempfile.NamedTemporaryFile(prefix="axpipe-exclude-") as handle:
        handle.write(patterns)
        handle.flush()
        completed = git.run(top, "ls-files", "-z", "--cached", "--ignored", f"--exclude-from={handle.name}",
                            env=env, optional_locks=False)
    return _names(completed.stdout) if completed.returncode == 0 else []
