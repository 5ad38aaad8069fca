"""Hydra plugins that put recipe libraries on Hydra's config search path.

A recipe library is a plain folder of ``*.yaml`` files; Hydra expects a ``recipe/``
group folder. :class:`RecipeLibrarySource` (scheme ``axpipe-recipes://``) serves such a
folder as the ``recipe`` group, and :class:`RecipeSearchPath` appends one source per
library in precedence order (project, env, packages, built-in), so Hydra's first match is
the library that wins. Both are registered with Hydra explicitly (no ``hydra_plugins``
namespace package, so every install mode finds them), and ``--help``, ``--info
searchpath`` and the compose API see them.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import ClassVar

import yaml
from hydra.core.config_search_path import ConfigSearchPath
from hydra.core.object_type import ObjectType
from hydra.plugins.config_source import ConfigLoadError, ConfigResult, ConfigSource
from hydra.plugins.search_path_plugin import SearchPathPlugin
from omegaconf import OmegaConf

from axpipe.errors import ConfigError, Problem
from axpipe.recipe.libraries import Library, read_recipe

GROUP = "recipe"
SCHEME = "axpipe-recipes"


class RecipeLibrarySource(ConfigSource):
    """Serves one recipe library folder as Hydra's ``recipe`` config group."""

    @staticmethod
    def scheme() -> str:
        return SCHEME

    def _file(self, config_path: str) -> str | None:
        normalized = self._normalize_file_name(config_path)
        group, _, name = normalized.partition("/")
        if group != GROUP or not name or "/" in name:
            return None
        return os.path.join(self.path, name)

    def load_config(self, config_path: str) -> ConfigResult:
        full_path = self._file(config_path)
        if full_path is None or not os.path.isfile(full_path):
            raise ConfigLoadError(f"Config not found : {config_path}")
        text = read_recipe(Path(full_path))  # not UTF-8: a config error naming the file and the byte
        header = ConfigSource._get_header_dict(text[:512])
        try:
            config = OmegaConf.load(io.StringIO(text))
        except yaml.YAMLError as error:  # the user's file: a config error, not a crash of ours
            raise ConfigError([Problem("", f"not valid YAML: {_yaml_problem(error)}", full_path)],
                              recipe=config_path.partition("/")[2].removesuffix(".yaml") or None) from error
        return ConfigResult(config=config, path=f"{self.scheme()}://{self.path}",
                            provider=self.provider, header=header)

    def available(self) -> bool:
        return os.path.isdir(self.path)

    def is_group(self, config_path: str) -> bool:
        return config_path.strip("/") in ("", GROUP)

    def is_config(self, config_path: str) -> bool:
        full_path = self._file(config_path)
        return full_path is not None and os.path.isfile(full_path)

    def list(self, config_path: str, results_filter: ObjectType | None) -> list[str]:
        path = config_path.strip("/")
        if path == "":
            return [GROUP] if results_filter in (None, ObjectType.GROUP) else []
        if path != GROUP or results_filter == ObjectType.GROUP:
            return []
        try:
            names = os.listdir(self.path)
        except OSError:  # a folder this user cannot list: warned about once (libraries.libraries)
            return []
        return sorted(name[:-5] for name in names
                      if name.endswith(".yaml") and os.path.isfile(os.path.join(self.path, name)))


def _yaml_problem(error: yaml.YAMLError) -> str:
    """PyYAML's complaint on one line, with the line and column where it found it."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    context = getattr(error, "context", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"{context + ': ' if context else ''}{problem}{where}"


class RecipeSearchPath(SearchPathPlugin):
    """Appends every recipe library, highest precedence first."""

    libraries: ClassVar[list[Library]] = []

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        for library in self.libraries:
            search_path.append(provider=library.provider, path=f"{SCHEME}://{library.path}")


def install(libraries: list[Library]) -> None:
    """Register both plugins with Hydra for this process."""
    from hydra.core.plugins import Plugins

    RecipeSearchPath.libraries = list(libraries)
    plugins = Plugins.instance()
    plugins.register(RecipeLibrarySource)
    plugins.register(RecipeSearchPath)
