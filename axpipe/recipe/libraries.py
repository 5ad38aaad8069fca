"""Recipe libraries: where recipes come from and which one wins a name.

A recipe library is a folder whose ``*.yaml`` files are recipes (``team.yaml`` is
``recipe=team``). Libraries are searched in this order, and the first one holding a name
wins it (DESIGN §2):

1. **project**: the folders listed under ``recipe_paths`` in the project's ``axpipe.yaml``;
2. **env**: the folders in ``AXPIPE_RECIPE_PATH`` (``os.pathsep`` separated);
3. **package**: folders named by installed packages' ``axpipe.recipes`` entry points;
4. **built-in**: axpipe's own ``recipes/``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path
from typing import Any, NamedTuple

from axpipe import resources
from axpipe.errors import ConfigError, InputError, Problem, not_found_message
from axpipe.plugin import entrypoints
from axpipe.workspace import ProjectConfig

ENV_VAR = "AXPIPE_RECIPE_PATH"
ENTRY_POINT_GROUP = "axpipe.recipes"


class Library(NamedTuple):
    """One folder of recipes and where it was declared."""

    kind: str  # project | env | package | builtin
    path: Path
    label: str

    @property
    def provider(self) -> str:
        """The provider name Hydra shows for this library in ``--info searchpath``."""
        return f"axpipe-{self.kind}"


class RecipeEntry:
    """A recipe on the search path, the library that wins its name and those it shadows.
    ``problem`` says why its file cannot be read (then it cannot be used), else None."""

    def __init__(self, name: str, path: Path, library: Library) -> None:
        self.name = name
        self.path = path
        self.library = library
        self.description = ""
        self.problem: str | None = None
        self.shadows: list[Library] = []

    @property
    def source(self) -> str:
        return self.library.label


def not_utf8(error: UnicodeDecodeError, data: bytes) -> str:
    """Where a recipe file stops being UTF-8, as a person can find it in an editor."""
    line = data.count(b"\n", 0, error.start) + 1
    return f"not valid UTF-8: byte 0x{data[error.start]:02x} on line {line} (offset {error.start})"


def read_recipe(path: Path) -> str:
    """The text of a recipe file; a :class:`ConfigError` naming the file when it is not
    UTF-8 (YAML is UTF-8) or cannot be read, so one broken file is reported, never a crash."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ConfigError([Problem("", f"cannot be read: {error.strerror}", str(path))],
                          recipe=path.stem) from error
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError([Problem("", not_utf8(error, data), str(path))], recipe=path.stem) from error


def libraries(project: ProjectConfig) -> list[Library]:
    """Every recipe library, highest precedence first. One that cannot be listed is kept
    (its recipes may still be found by name) and said once, on stderr (:func:`_warn_unlisted`)."""
    found = [Library("project", path, f"project ({_relative(path, project.root)})")
             for path in project.recipe_paths]
    found.extend(_env_libraries())
    found.extend(_package_libraries())
    found.append(Library("builtin", resources.builtin_recipes_dir(), "built-in"))
    for library in found:
        _warn_unlisted(library)
    return found


_warned: set[Path] = set()


def recipe_files(library: Library) -> list[Path]:
    """The recipe files of ``library`` that can be listed (none when the folder cannot be)."""
    try:
        names = os.listdir(library.path)
    except OSError:
        return []
    return sorted(library.path / name for name in names
                  if name.endswith(".yaml") and os.path.isfile(library.path / name))


def _warn_unlisted(library: Library) -> None:
    """A library folder this user cannot list hides its recipes from listings (and, when it
    cannot be entered either, from every lookup): a warning naming it, once per command."""
    if library.path in _warned or not os.path.isdir(library.path):
        return
    try:
        os.listdir(library.path)
        return
    except OSError as error:
        problem = error.strerror or str(error)
    _warned.add(library.path)
    if os.access(library.path, os.X_OK):
        effect = "its recipes are found only by name and are not listed"
    else:
        effect = "its recipes cannot be used"
    sys.stderr.write(f"axpipe: warning: recipe library {library.path} ({library.label}) cannot be read: "
                     f"{problem}; {effect}\n")
def prompt_folders(project: ProjectConfig) -> list[Path]:
    """Each library's ``prompts/`` folder, highest precedence first: where a team overrides
    axpipe's prompt templates (docs/roles.md). The built-in library has none."""
    return [library.path / "prompts" for library in libraries(project) if library.kind != "builtin"]


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _env_libraries() -> list[Library]:
    value = os.environ.get(ENV_VAR, "")
    result = []
    problems = []
    for index, entry in enumerate(part for part in value.split(os.pathsep) if part.strip()):
        folder = Path(os.path.expanduser(entry)).resolve()
        if not folder.is_dir():
            problems.append(Problem(f"{ENV_VAR}[{index}]", f"folder {entry!r} does not exist"))
            continue
        result.append(Library("env", folder, f"{ENV_VAR} ({entry})"))
    if problems:
        raise ConfigError(problems)
    return result


def _package_libraries() -> list[Library]:
    result = []
    for entry in entrypoints.entry_points(ENTRY_POINT_GROUP):
        folder = package_folder(entry.module)
        if folder is None:
            # A broken library must not hide every other recipe; `plugins list` shows it.
            continue
        result.append(Library("package", folder, f"package {entry.distribution}"))
    return result


def package_folder(module: str) -> Path | None:
    """The folder of package ``module`` (``pkg.recipes``) found without importing it.

    Importing would run the package's ``__init__`` (and its imports) just to list recipes.
    """
    top, _, rest = module.partition(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        folder = Path(location, *rest.split(".")) if rest else Path(location)
        if folder.is_dir():
            return folder
    return None


def discover(project: ProjectConfig) -> list[RecipeEntry]:
    """Every recipe name on the search path with the library that wins it, sorted by name."""
    winners: dict[str, RecipeEntry] = {}
    for library in libraries(project):
        for path in recipe_files(library):
            name = path.stem
            if name in winners:
                winners[name].shadows.append(library)
                continue
            winners[name] = RecipeEntry(name=name, path=path, library=library)
    for entry in winners.values():
        try:
            entry.description = read_description(entry.path)
        except ConfigError as error:  # one broken file: reported, every other recipe still listed
            entry.problem = error.problems[0].message
            entry.description = f"(unusable: {entry.problem})"
    return [winners[name] for name in sorted(winners)]


_SIMPLE_DESCRIPTION = re.compile(
    r"""^description:[ \t]*(?:"([^"\\]*)"|'([^']*)'|([^'"|>#\[{&*!%@`\s][^#\n]*?))[ \t]*$""", re.M)


def read_description(path: Path) -> str:
    """The recipe's ``description`` without composing it (empty when it has none); a
    :class:`ConfigError` when the file cannot be read or is not UTF-8.

    A one-line ``description:`` is read directly; anything else (block scalars, flow
    mappings, odd quoting) goes through the YAML parser, which costs more to import than the
    rest of ``recipes list`` together.
    """
    text = read_recipe(path)
    matches = list(_SIMPLE_DESCRIPTION.finditer(text))  # top-level keys only: `^` at column 0
    if len(matches) == 1:
        following = text[matches[0].end():].lstrip("\r\n").split("\n", 1)[0]
        if not following[:1].isspace():  # an indented next line would continue the scalar
            double, single, plain = matches[0].groups()
            return (double or single or plain or "").strip()
    import yaml

    try:
        data = yaml.load(text, Loader=_loader())
    except yaml.YAMLError:
        return "(unreadable: not valid YAML)"
    if isinstance(data, dict):
        description = data.get("description")
        if isinstance(description, str):
            return description.strip()
    return ""


def _loader() -> type[Any]:
    import yaml

    loader: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return loader


def find(project: ProjectConfig, name: str) -> RecipeEntry:
    """The recipe called ``name``, or an input error listing the available ones.

    Looked up file by file in precedence order, as Hydra composes it: a library folder that
    can be entered but not listed serves ``run`` and ``schedule add`` alike."""
    for library in libraries(project):
        path = library.path / f"{name}.yaml"
        if os.sep not in name and os.path.isfile(path):  # False, not an error, in a folder it cannot enter
            entry = RecipeEntry(name=name, path=path, library=library)
            try:
                entry.description = read_description(path)
            except ConfigError as error:
                entry.problem = error.problems[0].message
            return entry
    entries = discover(project)
    raise InputError(not_found_message("recipe", name, [entry.name for entry in entries]))


def defaults_chain(entry: RecipeEntry, project: ProjectConfig) -> list[Path]:
    """The recipe files a recipe is composed from, in merge order (itself last).

    Follows plain ``defaults`` entries naming other recipes; used to say which file a
    config value came from.
    """
    import yaml

    by_name = {item.name: item for item in discover(project)}
    chain: list[Path] = []
    seen: set[str] = set()

    def visit(item: RecipeEntry) -> None:
        if item.name in seen:
            return
        seen.add(item.name)
        try:
            data = yaml.load(read_recipe(item.path), Loader=_loader()) or {}
        except (ConfigError, yaml.YAMLError):
            data = {}
        defaults = data.get("defaults", []) if isinstance(data, dict) else []
        self_first = False
        for default in defaults if isinstance(defaults, list) else []:
            if default == "_self_":
                if not chain or chain[-1] != item.path:
                    chain.append(item.path)
                self_first = True
                continue
            if isinstance(default, str):
                other = default.split("@", 1)[0].strip().removeprefix("/").removeprefix("recipe/")
                if other in by_name:
                    visit(by_name[other])
        if not self_first:
            chain.append(item.path)

    visit(entry)
    return chain


def _named_defaults(path: Path) -> list[str]:
    """The recipes a recipe file names in its defaults list (as Hydra resolves them: plain
    ``base``, ``/recipe/base`` or ``/recipe: base``), in order."""
    import yaml

    try:
        data = yaml.load(read_recipe(path), Loader=_loader()) or {}
    except (ConfigError, yaml.YAMLError):
        return []
    defaults = data.get("defaults", []) if isinstance(data, dict) else []
    names = []
    for default in defaults if isinstance(defaults, list) else []:
        if isinstance(default, dict) and len(default) == 1:
            key, value = next(iter(default.items()))
            if str(key).split("@", 1)[0].split()[-1:] == ["/recipe"] and isinstance(value, str):
                names.append(value.strip())
        elif isinstance(default, str) and default.strip() != "_self_":
            name = default.split("@", 1)[0].strip()
            names.append(name.removeprefix("/recipe/") if name.startswith("/") else name)
    return names


def defaults_cycle(project: ProjectConfig, names: list[str]) -> tuple[str, RecipeEntry, list[str]] | None:
    """The first cycle in the defaults lists reachable from recipes ``names`` (all recipes
    when empty): the recipe it was reached from, the recipe whose defaults close it and the
    names around it (``[a, b, a]``)."""
    by_name = {item.name: item for item in discover(project)}
    done: set[str] = set()

    def walk(name: str, trail: list[str]) -> tuple[RecipeEntry, list[str]] | None:
        if name in trail:
            return by_name[trail[-1]], [*trail[trail.index(name):], name]
        if name in done or name not in by_name:
            return None
        for other in _named_defaults(by_name[name].path):
            found = walk(other, [*trail, name])
            if found:
                return found
        done.add(name)
        return None

    for name in names or sorted(by_name):
        found = walk(name, [])
        if found:
            return (name, *found)
    return None
