"""What a success condition is made of: the files that define its commands.

A command line is split into simple commands (at ``;``, ``&&``, ``||``, ``|``, ``( )``;
``cd DIR`` moves the rest), wrappers are peeled off (``VAR=1``, ``env``, ``exec``,
``time``, ``timeout 60``, ``uv run``, ``poetry run``, ``npx``...), and what remains is
looked up:

- a **harness script** the command runs: a shell script (``./smoke.sh``, ``bash
  scripts/check.sh``, ``./ci`` with a shell shebang or none), or a script of another
  interpreter whose path says it checks (``python tools/verify.py``, ``node
  scripts/smoke-test.js``: a word of the path among :data:`VERIFIER_WORDS`). A script
  named otherwise (``python3 gen.py``) is the program being repaired, not its judge. A
  shell script's own lines are read in turn, so ``ruff check .`` inside ``./ci.sh``
  protects ruff's configuration;
- a **runner's definition**: ``make`` → the Makefile (whole, and the files it includes),
  ``npm``/``yarn``/``pnpm``/``bun run`` → the ``scripts`` entries of package.json that run
  (with ``pre``/``post``), ``pdm run`` / ``hatch run`` → the pdm or hatch scripts of
  pyproject.toml (or hatch.toml) that run, ``tox`` → tox.ini, ``nox`` → noxfile.py, ``just`` → the justfile,
  ``pre-commit run`` → .pre-commit-config.yaml. Make recipes, package scripts and tox
  ``commands`` are followed in turn, so ``npm run lint`` → ``eslint .`` protects eslint's
  configuration;
- a **linter** (``ruff``, ``flake8``, ``mypy``, ``eslint``), with the configuration files its
  options name.

Paths are relative to the repository's top; files are read as they were before the change.
"""

from __future__ import annotations

import configparser
import posixpath
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from . import condition_scripts as tables
from .condition_make import follow

Reader = Callable[[str], "str | None"]

SHELLS = {"sh", "bash", "zsh", "dash", "ksh"}
INTERPRETERS = re.compile(r"(python|pypy)[\d.]*|node|nodejs|deno|bun|tsx|ts-node|ruby|perl|php|Rscript")
LINTERS = {"ruff": "ruff", "flake8": "flake8", "pflake8": "flake8", "mypy": "mypy", "dmypy": "mypy",
           "eslint": "eslint"}
VERIFIER_WORDS = {"check", "checks", "checker", "verify", "verifier", "verification", "validate", "validation",
                  "smoke", "test", "tests", "lint", "linter", "ci", "e2e", "oracle", "gate", "audit", "spec", "assert"}
WRAPPERS = {"env", "exec", "command", "nohup", "time", "nice", "timeout", "sudo", "xvfb-run", "npx", "bunx", "uvx",
            "pipx"}
RUN_WRAPPERS = {"uv", "poetry", "pipenv", "rye"}   # `X run CMD`: CMD is what runs (pdm, hatch: a script first)
SHELL_KEYWORDS = {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}"}
CONFIG_OPTIONS = {"ruff": ("--config",), "mypy": ("--config-file",), "flake8": ("--config", "--append-config"),
                  "eslint": ("-c", "--config", "--ignore-path")}
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
NPM_ALIASES = {"test": "test", "t": "test", "tst": "test", "start": "start", "stop": "stop", "restart": "restart"}
MAX_DEPTH = 6
_TEST_FILE = re.compile(r"(^|/)(test_[^/]*\.py|[^/]*_test\.py|[^/]*\.(test|spec)\.[cm]?[jt]sx?)$")


@dataclass
class Definition:
    """A file that defines the condition; ``scripts``: only these ``(table, name)`` entries
    (:mod:`.condition_scripts`), else the whole file."""

    path: str
    why: str
    scripts: set[tuple[str, str]] | None = None


@dataclass
class Protection:
    """Everything the success condition's commands are made of."""

    files: dict[str, Definition] = field(default_factory=dict)
    linters: dict[str, set[str]] = field(default_factory=dict)
    """linter → configuration files its command line names (repository-relative)."""

    def protect(self, path: str, why: str, scripts: set[tuple[str, str]] | None = None) -> None:
        if _TEST_FILE.search(path):
            return  # a test file run directly: the python/javascript guards judge its edits
        known = self.files.get(path)
        if known is None:
            self.files[path] = Definition(path, why, None if scripts is None else set(scripts))
        elif known.scripts is not None:
            known.scripts = None if scripts is None else known.scripts | scripts


def protection(commands: list[str], workdir: str, read: Reader) -> Protection:
    """The files and linters behind ``commands``, run in ``workdir`` (``""``: the top)."""
    found = Protection()
    for command in commands:
        _line(command, workdir.strip("/"), read, found, 0)
    return found


def _line(command: str, cwd: str, read: Reader, out: Protection, depth: int) -> None:
    if depth > MAX_DEPTH:
        return
    for words in _segments(command):
        words = _peel(words)
        if len(words) >= 2 and words[0] == "cd":
            cwd = _join(cwd, words[1]) or cwd
        elif words:
            _simple(words, cwd, read, out, depth)


def _segments(command: str) -> list[list[str]]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return []
    segments: list[list[str]] = [[]]
    skip = False
    for token in tokens:
        if token and all(char in ";&|()<>" for char in token):
            if "<" in token or ">" in token:
                skip = True      # the next word is where output goes, not an argument
            else:
                segments.append([])
            continue
        if not skip:
            segments[-1].append(token)
        skip = False
    return [segment for segment in segments if segment]


def _peel(words: list[str]) -> list[str]:
    """Drop variable assignments and wrappers: what remains starts with the program."""
    while words:
        first = posixpath.basename(words[0])
        if re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]) or words[0] in SHELL_KEYWORDS:
            words = words[1:]  # an assignment, or `if`/`then`/`do`... of a script's line
        elif first in WRAPPERS:
            words = words[1:]
            while words and (words[0].startswith("-") or re.fullmatch(r"[A-Za-z_]\w*=.*", words[0])):
                words = words[2:] if words[0] in ("-u", "-n", "-s", "-k", "-p") and first != "time" else words[1:]
            if first == "timeout" and words:
                words = words[1:]  # the duration
        elif first in RUN_WRAPPERS and len(words) > 1 and words[1] == "run":
            words = words[2:]
            while words and words[0].startswith("-"):
                words = words[1:]
        else:
            return words
    return words


def _join(cwd: str, path: str) -> str | None:
    """``path`` from ``cwd``, relative to the repository's top; None outside it."""
    if path.startswith("/") or path.startswith("~") or "$" in path:
        return None
    joined = posixpath.normpath(posixpath.join(cwd, path)) if cwd else posixpath.normpath(path)
    return None if joined == ".." or joined.startswith("../") else ("" if joined == "." else joined)


def _simple(words: list[str], cwd: str, read: Reader, out: Protection, depth: int) -> None:
    program, args = words[0], words[1:]
    name = posixpath.basename(program)
    shown = " ".join(words)
    if name in SHELLS:
        _shell(args, cwd, read, out, depth, shown)
    elif INTERPRETERS.fullmatch(name):
        _interpreted(name, args, cwd, read, out, depth, shown)
    elif name in ("npm", "yarn", "pnpm", "bun"):
        _package(name, args, cwd, read, out, depth, shown)
    elif name in ("pdm", "hatch") and len(args) >= 2 and args[0] == "run":
        _python_scripts(name, args[1:], cwd, read, out, depth, shown)
    elif name in ("make", "gmake"):
        _make(args, cwd, read, out, depth, shown)
    elif name == "tox":
        _tox(args, cwd, read, out, depth, shown)
    elif name in ("nox", "just", "pre-commit"):
        _definition_only(name, args, cwd, read, out, shown)
    elif name in LINTERS:
        _linter(LINTERS[name], args, cwd, out)
    elif "/" in program:
        path = _join(cwd, program)
        text = read(path) if path else None
        # a script that was not there is protected too: creating it is defining the condition
        shell = bool(path) and (text is None or _interpreter(text) in SHELLS
                                or str(path).endswith((".sh", ".bash", ".zsh")))
        if path and (shell or _verifier(path)):
            out.protect(path, f"`{shown}` runs it")
            if shell and text is not None:
                _script(text, cwd, read, out, depth)


def _interpreter(text: str) -> str:
    """The program a script's shebang names; ``sh`` without one (how a shell runs it)."""
    parts = text.splitlines()[0][2:].split() if text.startswith("#!") else []
    name = posixpath.basename(parts[0]) if parts else "sh"
    if name == "env":
        name = next((part for part in parts[1:] if not part.startswith("-")), "sh")
    return name


def _verifier(path: str) -> bool:
    return bool(set(re.split(r"[/_.\-]+", path.lower())) & VERIFIER_WORDS)


def _shell(args: list[str], cwd: str, read: Reader, out: Protection, depth: int, shown: str) -> None:
    index = 0
    while index < len(args) and args[index][:1] in "-+" and args[index] not in ("-", "--"):
        option = args[index]
        if option == "-c" or (option[0] == "-" and "c" in option[1:] and not option.startswith("--")):
            if index + 1 < len(args):
                _line(args[index + 1], cwd, read, out, depth + 1)
            return
        index += 2 if option.endswith("o") and not option.startswith("--") else 1
    if index < len(args) and args[index] == "--":
        index += 1
    if index < len(args):
        path = _join(cwd, args[index])
        if path:
            out.protect(path, f"`{shown}` runs it")
            text = read(path)
            if text is not None:
                _script(text, cwd, read, out, depth)


def _script(text: str, cwd: str, read: Reader, out: Protection, depth: int) -> None:
    """A shell script's lines, as commands run from where the script is run (a ``cd`` in it
    moves the rest of its line only; a folder computed at run time is not followed)."""
    pending = ""
    for raw in text.splitlines():
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        line, pending = (pending + raw).strip(), ""
        if line and not line.startswith("#"):
            _line(line, cwd, read, out, depth + 1)


def _interpreted(name: str, args: list[str], cwd: str, read: Reader, out: Protection, depth: int,
                 shown: str) -> None:
    index = 0
    while index < len(args) and args[index].startswith("-") and args[index] != "-":
        option = args[index]
        if option in ("-c", "-e", "--eval", "-p", "--print"):
            return
        if option == "-m" and index + 1 < len(args):
            _module(args[index + 1], args[index + 2:], cwd, read, out, depth, shown)
            return
        index += 2 if option in ("-W", "-X", "-r", "--require", "--import", "--loader") else 1
    if index < len(args):
        path = _join(cwd, args[index])
        if path and (read(path) is not None) and _verifier(path):
            out.protect(path, f"`{shown}` runs it")
        elif name in ("bun", "deno") and args[index] == "run":
            _package("bun", args, cwd, read, out, depth, shown)


def _module(module: str, args: list[str], cwd: str, read: Reader, out: Protection, depth: int, shown: str) -> None:
    if module in LINTERS:
        _linter(LINTERS[module], args, cwd, out)
        return
    base = module.replace(".", "/")
    for candidate in (f"{base}.py", f"{base}/__main__.py"):
        path = _join(cwd, candidate)
        if path and read(path) is not None and _verifier(path):
            out.protect(path, f"`{shown}` runs it")


def _linter(linter: str, args: list[str], cwd: str, out: Protection) -> None:
    configs = out.linters.setdefault(linter, set())
    options = CONFIG_OPTIONS[linter]
    for index, word in enumerate(args):
        value = None
        if word in options and index + 1 < len(args):
            value = args[index + 1]
        elif "=" in word and word.split("=", 1)[0] in options:
            value = word.split("=", 1)[1]
        path = _join(cwd, value) if value and "=" not in value else None
        if path:
            configs.add(path)


def _package(tool: str, args: list[str], cwd: str, read: Reader, out: Protection, depth: int, shown: str) -> None:
    words = list(args)
    while words and words[0].startswith("-"):  # --prefix DIR, -C DIR, --cwd DIR, --dir DIR, --silent
        if words[0] in ("--prefix", "-C", "--dir", "--cwd") and len(words) > 1:
            cwd = _join(cwd, words[1]) or cwd
            words = words[2:]
        else:
            words = words[1:]
    if not words:
        return
    verb, rest = words[0], words[1:]
    if verb in ("run", "run-script", "rum", "urn"):
        if not rest:
            return
        script, rest = rest[0], rest[1:]
    elif tool == "npm" and verb in NPM_ALIASES:
        script = NPM_ALIASES[verb]
    elif tool in ("yarn", "pnpm") and verb not in ("install", "add", "remove", "exec", "dlx", "why", "outdated"):
        script = verb
    else:
        if verb in ("exec", "dlx", "x") and rest:
            _line(shlex.join(rest), cwd, read, out, depth + 1)
        return
    manifest = _join(cwd, "package.json") or "package.json"
    scripts = tables.load(read(manifest), manifest, "scripts") or {}
    if script not in scripts and tool in ("yarn", "pnpm", "bun"):
        _line(shlex.join([script, *rest]), cwd, read, out, depth + 1)  # not a script: a program of node_modules/.bin
        return
    names = {script, f"pre{script}", f"post{script}"}
    out.protect(manifest, f"`{shown}` runs its scripts", {("scripts", name) for name in names})
    for entry in sorted(names):
        if entry in scripts:
            _line(scripts[entry], cwd, read, out, depth + 1)


def _python_scripts(tool: str, args: list[str], cwd: str, read: Reader, out: Protection, depth: int,
                    shown: str) -> None:
    """``pdm run NAME`` / ``hatch run [ENV:]NAME``: the script entries that run (pdm's
    ``pre_``/``post_`` hooks and composites, scripts that name other scripts), followed to
    what they run; a NAME that is no script is a program, as ``uv run`` runs one."""
    words = list(args)
    while words and words[0].startswith("-"):
        words = words[1:]
    if not words:
        return
    name, rest = words[0], words[1:]
    if tool == "pdm":
        candidates = [(_join(cwd, "pyproject.toml") or "pyproject.toml", tables.PDM)]
        hooks = [f"pre_{name}", f"post_{name}"]
    else:
        env, _, name = name.rpartition(":")
        env = env or "default"
        candidates = [(path, tables.hatch_table(path, env)) for path in
                      (_join(cwd, "hatch.toml") or "hatch.toml", _join(cwd, "pyproject.toml") or "pyproject.toml")]
        hooks = []
    for path, table in candidates:
        text = read(path)
        known = tables.load(text, path, table) or {}
        if name not in known:
            continue
        wanted, seen = [name, *(hook for hook in hooks if hook in known)], set()
        while wanted:
            entry = wanted.pop(0)
            if entry in seen or entry not in known:
                continue
            seen.add(entry)
            lines, called = tables.commands(text, path, table, entry)
            wanted.extend(called)
            for line in lines:
                _line(line, cwd, read, out, depth + 1)
        out.protect(path, f"`{shown}` runs its {tool} scripts", {(table, entry) for entry in seen})
        return
    _line(shlex.join([name, *rest]), cwd, read, out, depth + 1)  # not a script: a program in the environment


def _make(args: list[str], cwd: str, read: Reader, out: Protection, depth: int, shown: str) -> None:
    makefile, targets, index = None, [], 0
    while index < len(args):
        word = args[index]
        if word in ("-C", "--directory") and index + 1 < len(args):
            cwd, index = _join(cwd, args[index + 1]) or cwd, index + 2
        elif word in ("-f", "--file", "--makefile") and index + 1 < len(args):
            makefile, index = args[index + 1], index + 2
        elif word.startswith(("--file=", "--makefile=")):
            makefile, index = word.split("=", 1)[1], index + 1
        elif word in ("-j", "-l", "-o", "-W", "-I") and index + 1 < len(args):
            index += 2
        elif word.startswith("-") or "=" in word:
            index += 1
        else:
            targets.append(word)
            index += 1
    names = [makefile] if makefile else list(MAKEFILES)
    for candidate in names:
        path = _join(cwd, candidate)
        text = read(path) if path else None
        if path and (text is not None or makefile):
            out.protect(path, f"`{shown}` runs its recipes")
            if text is not None:
                for included in follow(text, targets, lambda line: _line(line, cwd, read, out, depth + 1)):
                    if (included_path := _join(cwd, included)) and read(included_path) is not None:
                        out.protect(included_path, f"`{shown}` runs recipes of the Makefile that includes it")
            return
    out.protect(_join(cwd, "Makefile") or "Makefile", f"`{shown}` runs its recipes")  # creating one is redefining


def _tox(args: list[str], cwd: str, read: Reader, out: Protection, depth: int, shown: str) -> None:
    config, envs = "tox.ini", []
    for index, word in enumerate(args):
        if word in ("-c", "--conf") and index + 1 < len(args):
            config = args[index + 1]
        elif word in ("-e", "--env") and index + 1 < len(args):
            envs.extend(args[index + 1].split(","))
    path = _join(cwd, config) or "tox.ini"
    out.protect(path, f"`{shown}` runs its environments")
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(read(path) or "")
    except configparser.Error:
        return
    if not envs and parser.has_option("tox", "envlist"):
        envs = re.split(r"[\s,]+", parser.get("tox", "envlist").strip())
    for env in envs or ["py"]:
        section = f"testenv:{env}" if parser.has_section(f"testenv:{env}") else "testenv"
        if parser.has_option(section, "commands"):
            for command in parser.get(section, "commands").splitlines():
                _line(re.sub(r"\{[^}]*\}", "", command), cwd, read, out, depth + 1)


def _definition_only(name: str, args: list[str], cwd: str, read: Reader, out: Protection, shown: str) -> None:
    """nox, just and pre-commit: their definition file, whole."""
    options = {"nox": ("-f", "--noxfile"), "just": ("-f", "--justfile"), "pre-commit": ("-c", "--config")}[name]
    defaults = {"nox": ["noxfile.py"], "just": ["justfile", "Justfile", ".justfile"],
                "pre-commit": [".pre-commit-config.yaml"]}[name]
    named = [args[index + 1] for index, word in enumerate(args[:-1]) if word in options]
    candidates = named or defaults
    path = next((found for candidate in candidates if (found := _join(cwd, candidate)) and read(found) is not None),
                _join(cwd, candidates[0]))
    if path:
        out.protect(path, f"`{shown}` runs what it defines")
        if name == "pre-commit":  # its hooks: the linters they run read their own configuration
            for linter in set(re.findall(r"(?m)^\s*-?\s*id:\s*['\"]?(ruff|flake8|mypy|eslint)\b", read(path) or "")):
                out.linters.setdefault(linter, set())
