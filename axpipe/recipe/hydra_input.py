"""What axpipe changes in the user's Hydra arguments, and Hydra's plain Python errors about them.

Two rewrites keep Hydra's grammar out of the user's way: a schema key becomes ``++KEY``
(see :func:`axpipe.recipe.hydra_env.schema_overrides`), and a recipe name Hydra would read as a
number, a bool or null (``recipe=2024``: ``lib/2024.yaml``) is quoted, since a config
group choice must be a string. :func:`typed_form` turns an override back into what the
user typed, for the multirun summary and the run's record.

Hydra reports some mistakes in its input as a bare ``ValueError`` (``-m`` with ``--cfg``,
a numeric group choice in a sweep function, a malformed defaults list) and a recipe that
lists itself in its defaults as a ``RecursionError``. :func:`user_error` turns exactly
those into config errors (exit 2); any other ``ValueError`` or ``RecursionError`` stays an
internal error, since it is one.
"""

from __future__ import annotations

import re
from pathlib import Path

from axpipe.errors import ConfigError, InputError, Problem
from axpipe.recipe import libraries as recipes
from axpipe.workspace import ProjectConfig

RECIPE = "recipe"
# A value whose elements can be split on commas without Hydra's parser: no quoting, no
# brackets, no sweep functions, no interpolation.
_PLAIN_VALUE = re.compile(r"[^'\"\\()\[\]{}$]*")


def quote_recipe_choice(argument: str) -> str:
    """``recipe=2024`` as ``recipe='2024'`` (and ``recipe=simple,2024`` as ``recipe=simple,'2024'``).

    Hydra's grammar reads ``2024``, ``1.5``, ``true`` or ``null`` as a number, a bool or
    null, and a config group choice that is not a string is a ``ValueError`` deep in
    Hydra. Every other argument, and anything beyond a plain comma list, is left as typed.
    """
    key, equals, value = argument.partition("=")
    if key != RECIPE or not equals or not _PLAIN_VALUE.fullmatch(value):
        return argument
    elements = [element.strip() for element in value.split(",")]
    quoted = [f"'{element}'" if element and not isinstance(_parsed(element), str) else element
              for element in elements]
    return argument if quoted == elements else f"{RECIPE}={','.join(quoted)}"


# Read as a string for sure (most names): no need to ask Hydra's parser.
_NAME = re.compile(r"(?!(?:true|false|null|inf|nan)$)[A-Za-z_][\w.\-/]*", re.IGNORECASE)


def _parsed(element: str) -> object:
    """The value Hydra's override grammar gives ``element`` (a string when it cannot parse it)."""
    if _NAME.fullmatch(element):
        return element
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    try:
        return OverridesParser.create().parse_override(f"{RECIPE}={element}").value()
    except HydraException:
        return element


def typed_form(override: str, typed: list[str]) -> str:
    """``override`` as one of Hydra's jobs received it, written as the user typed it in
    ``typed``: without the ``++`` or the quotes axpipe added."""
    typed_keys = {argument.partition("=")[0] for argument in typed if "=" in argument}
    key, _, value = override.partition("=")
    if key.startswith("++") and key[2:] in typed_keys:
        return override[2:]
    if key == RECIPE and len(value) > 2 and value[0] == value[-1] == "'":
        typed_names = {element.strip() for argument in typed if argument.partition("=")[0] == RECIPE
                       for element in argument.partition("=")[2].split(",")}
        if value[1:-1] in typed_names:
            return f"{RECIPE}={value[1:-1]}"
    return override


def recipe_names(arguments: list[str]) -> list[str]:
    """The recipe names ``recipe=`` arguments choose (quotes removed)."""
    return [element.strip().strip("'\"") for argument in arguments if argument.partition("=")[0] == RECIPE
            for element in argument.partition("=")[2].split(",") if element.strip()]


# Hydra 1.3's ValueErrors about its input (command-line flags, overrides, defaults lists and
# headers of config files): the start of each message, and what it is about.
_FLAGS = ("Only one of --run, --multirun, --cfg, --info and --shell_completion can be specified",
          "The --resolve flag can only be used in conjunction with --cfg or --help",
          "Expecting one subcommand from ", "No completion plugin for ")
_OVERRIDES = ("Config group override must be a string or a list", "Config group override deletion value must be")
_FILES = ("Invalid defaults list in ", "Unsupported item value in defaults", "Unsupported type in defaults",
          "_self_@PACKAGE is not supported", "Expected header format: KEY VALUE", "Too many components in '")
_FILE_NAMED = re.compile(r"^In [^:]+: (?:Too many keys in default item|Missing group name in) ")


def user_error(error: BaseException, project: ProjectConfig, chosen: list[str]) -> InputError | None:
    """``error`` as the config error it is when Hydra raised it about the user's input;
    ``None`` when it is not one (a bug stays a bug). ``chosen``: the recipes selected."""
    if isinstance(error, RecursionError):
        return _cycle_error(project, chosen)
    if type(error) is not ValueError or not _raised_by_hydra(error):
        return None
    message = str(error).strip()
    if message.startswith(_FLAGS):
        hint = " (e.g. --shell-completion install=bash)" if message.startswith("Expecting one subcommand") else ""
        return InputError(f"{message}{hint}; see axpipe run --help")
    if message.startswith(_OVERRIDES):
        message = message.split(" : Override(", 1)[0]  # Hydra appends its internal repr
        return ConfigError([Problem(RECIPE, f"{message}; recipes are chosen by name (recipe=a or -m recipe=a,b), "
                                            f"and a name that looks like a number may be quoted (recipe='2024')",
                                    "command line")])
    if message.startswith(_FILES) or _FILE_NAMED.match(message):
        if re.search(r"\b(?:int|float|bool)\b", message):
            message += "; a recipe name in defaults that looks like a number needs quotes (- '2024')"
        return ConfigError([Problem("defaults", message)])
    return None


def _raised_by_hydra(error: BaseException) -> bool:
    """True when the innermost frame of ``error``'s traceback is Hydra's own code."""
    import hydra

    traceback = error.__traceback__
    if traceback is None:
        return False
    while traceback.tb_next is not None:
        traceback = traceback.tb_next
    return Path(hydra.__file__).parent in Path(traceback.tb_frame.f_code.co_filename).parents


def _cycle_error(project: ProjectConfig, chosen: list[str]) -> InputError | None:
    found = recipes.defaults_cycle(project, chosen)
    if found is None:
        return None  # a RecursionError without a cycle in the defaults is not the user's
    chosen_name, entry, cycle = found
    where = _display(entry.path)
    if len(cycle) == 2 and entry.shadows:
        message = (f"'{entry.name}' lists itself in its defaults: a name in defaults means the first library "
                   f"holding it, which is this file, not the '{entry.name}' of {entry.shadows[0].label} it "
                   f"shadows. To extend that one, give this recipe another name (team-{entry.name}.yaml "
                   f"with defaults: [{entry.name}, _self_])")
    elif len(cycle) == 2:
        message = f"'{entry.name}' lists itself in its defaults; a recipe cannot extend itself"
    else:
        message = f"the defaults form a cycle: {' -> '.join(cycle)}; a recipe cannot extend itself"
    return ConfigError([Problem("defaults", message, where)], recipe=chosen_name)


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
