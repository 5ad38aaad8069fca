"""Every plugin lookup goes through here (stevedore entry points, DESIGN §10).

First-party plugins are declared in axpipe's own ``pyproject.toml`` exactly as a third
party declares theirs. A plugin that fails to import is reported with its distribution and
error by :func:`list_plugins` and by :func:`load` when a run names it; it never breaks
lookups of other plugins.
"""

from __future__ import annotations

import sys
from dataclasses import asdict
from typing import Any

from axpipe.errors import PluginError, not_found_message
from axpipe.plugin import entrypoints
from axpipe.plugin import shape as plugin_shape
from axpipe.recipe.libraries import package_folder
from axpipe.records import record

NAMESPACES: dict[str, str] = {
    "axpipe.checks": "check kinds and semantic conditions",
    "axpipe.agents": "programs that do work or repairs",
    "axpipe.reviewers": "review CLIs",
    "axpipe.receipt_verifiers": "receipt verifiers",
    "axpipe.test_adapters": "run named tests exactly once; narrow the gate's test commands",
    "axpipe.guards": "repair guards",
    "axpipe.recipes": "recipe libraries",
    "axpipe.deliverers": "pull/merge requests after the branch contract",
}

_KIND_WORDS = {
    "axpipe.checks": "check kind",
    "axpipe.agents": "agent",
    "axpipe.reviewers": "reviewer",
    "axpipe.receipt_verifiers": "receipt verifier",
    "axpipe.test_adapters": "test adapter",
    "axpipe.guards": "guard",
    "axpipe.recipes": "recipe library",
    "axpipe.deliverers": "deliverer",
}

_loaded: dict[tuple[str, str], Any] = {}
_origins: dict[int, entrypoints.Declared] = {}  # id of a loaded plugin -> its entry point (kept alive by _loaded)

# What a plugin may raise while it is imported or made: SystemExit too (a module that calls
# sys.exit() on import must not end `plugins list`, nor a run with its own exit code).
_PLUGIN_FAILURES = (Exception, SystemExit)


@record(frozen=True)
class PluginInfo:
    """One declared plugin, as ``plugins list --json`` shows it (DESIGN §13)."""

    namespace: str
    name: str
    distribution: str
    module: str
    error: str | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def kind_word(namespace: str) -> str:
    return _KIND_WORDS.get(namespace, "plugin")


def names(namespace: str) -> list[str]:
    """Names declared in ``namespace`` (loadable or not)."""
    return [entry.name for entry in entrypoints.entry_points(namespace)]


def _describe_error(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def list_plugins(namespaces: list[str] | None = None) -> list[PluginInfo]:
    """Every declared plugin, loaded to find out which ones are broken."""
    infos: list[PluginInfo] = []
    for namespace in namespaces or list(NAMESPACES):
        declared = entrypoints.entry_points(namespace)
        counts: dict[str, list[str]] = {}
        for entry in declared:
            counts.setdefault(entry.name, []).append(entry.distribution)
        for entry in declared:
            error: str | None
            if len(counts[entry.name]) > 1:
                others = ", ".join(d for d in counts[entry.name] if d != entry.distribution)
                error = f"the name '{entry.name}' is also declared by {others}; runs cannot use it"
            elif namespace == "axpipe.recipes":
                error = _check_recipe_library(entry)
            else:
                error = _try_load(namespace, entry)
            infos.append(PluginInfo(namespace, entry.name, entry.distribution, entry.module, error))
    return infos


def _check_recipe_library(entry: entrypoints.Declared) -> str | None:
    if package_folder(entry.module) is None:
        return f"'{entry.module}' is not a package folder that can be found on sys.path"
    return None


def _try_load(namespace: str, entry: entrypoints.Declared) -> str | None:
    """Import the entry point's target the way stevedore would, and report what goes wrong.

    Listing imports targets directly instead of through stevedore: importing stevedore (and
    the importlib.metadata it needs) would cost more than the whole ``plugins list``.
    """
    try:
        target = _import_target(entry)
        plugin = target() if isinstance(target, type) else target
    except _PLUGIN_FAILURES as error:
        return _failure(namespace, entry, error)
    return _shape_failure(namespace, entry, plugin, deep=False)


def _import_target(entry: entrypoints.Declared) -> Any:
    """The object ``module:attribute`` of the entry point names, imported as stevedore does."""
    import importlib

    module_name, _, attribute = entry.value.partition(":")
    target: Any = importlib.import_module(module_name.strip())
    for part in attribute.strip().split(".") if attribute.strip() else []:
        target = getattr(target, part)
    return target


def load(namespace: str, name: str) -> Any:
    """The plugin object for ``name`` in ``namespace``: the entry point's target, instantiated
    when it is a class. Raises :class:`~axpipe.errors.PluginError` naming what is available,
    or the distribution and error of a plugin that failed to load."""
    key = (namespace, name)
    if key in _loaded:
        return _loaded[key]
    declared = [entry for entry in entrypoints.entry_points(namespace) if entry.name == name]
    if not declared:
        raise PluginError(not_found_message(kind_word(namespace), name, names(namespace))
                          + f" (entry point group {namespace})")
    if len(declared) > 1:
        dists = ", ".join(entry.distribution for entry in declared)
        raise PluginError(f"{kind_word(namespace)} '{name}' is declared by several distributions "
                          f"({dists}); uninstall all but one")
    entry = declared[0]
    try:
        target = _load_with_stevedore(namespace, name, entry)
    except SystemExit as error:  # stevedore catches Exception only
        raise PluginError(_failure(namespace, entry, error)) from error
    try:
        plugin = target() if isinstance(target, type) else target
    except _PLUGIN_FAILURES as error:
        raise PluginError(_failure(namespace, entry, error)) from error
    broken = _shape_failure(namespace, entry, plugin, deep=True)
    if broken is not None:
        raise PluginError(broken)
    _loaded[key] = plugin
    _origins[id(plugin)] = entry
    return plugin


def _shape_failure(namespace: str, entry: entrypoints.Declared, plugin: object, *, deep: bool) -> str | None:
    """The plugin's protocol violations (:mod:`axpipe.plugin.shape`) as one error, or None."""
    found = plugin_shape.problems(namespace, plugin, deep=deep)
    if not found:
        return None
    return (f"{kind_word(namespace)} '{entry.name}' does not satisfy the {plugin_shape.protocol_name(namespace)} "
            f"protocol ({namespace}, from {entry.distribution}, {entry.value}): {'; '.join(found)}")


def origin(plugin: object) -> entrypoints.Declared | None:
    """The entry point ``plugin`` was loaded from by :func:`load`, or None."""
    return _origins.get(id(plugin))


def describe(plugin: object) -> str:
    """Who ``plugin`` is, for errors raised while it runs: its kind, name and distribution
    (``check kind 'x' (axpipe.checks, from dist)``); its class name when it was not loaded
    through :func:`load`."""
    entry = _origins.get(id(plugin))
    if entry is None:
        return f"plugin {type(plugin).__qualname__}"
    return f"{kind_word(entry.group)} '{entry.name}' ({entry.group}, from {entry.distribution})"


def _stevedore_can_hash() -> bool:
    """Can stevedore's entry-point cache name this interpreter's ``sys.path``? It hashes every
    entry as strict UTF-8, so a folder whose name is not UTF-8 on it (``python -m axpipe``
    run there puts the current folder first) ends every load with ``UnicodeEncodeError``."""
    try:
        for folder in (sys.executable, sys.prefix, *sys.path):
            folder.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _load_with_stevedore(namespace: str, name: str, entry: entrypoints.Declared) -> Any:
    if not _stevedore_can_hash():  # the same import stevedore would do, without its cache
        try:
            return _import_target(entry)
        except _PLUGIN_FAILURES as error:
            raise PluginError(_failure(namespace, entry, error)) from error
    from stevedore import driver
    from stevedore.exception import NoMatches

    failures: list[BaseException] = []

    def on_failure(_manager: object, _entry_point: object, error: BaseException) -> None:
        failures.append(error)

    try:
        manager: driver.DriverManager[Any] = driver.DriverManager(namespace, name, invoke_on_load=False,
                                       on_load_failure_callback=on_failure)
    except NoMatches as error:
        if failures:
            raise PluginError(_failure(namespace, entry, failures[0])) from failures[0]
        raise PluginError(_failure(namespace, entry, error)) from error
    if failures:
        raise PluginError(_failure(namespace, entry, failures[0])) from failures[0]
    return manager.driver


def _failure(namespace: str, entry: entrypoints.Declared, error: BaseException) -> str:
    return (f"{kind_word(namespace)} '{entry.name}' ({namespace}, from {entry.distribution}, "
            f"{entry.value}) failed to load: {_describe_error(error)}")


def forget() -> None:
    """Drop loaded plugins and cached entry points (for tests that install plugins)."""
    _loaded.clear()
    _origins.clear()
    entrypoints.clear_cache()
