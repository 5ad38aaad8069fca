"""Compose a recipe without running it (Hydra's compose API), for read-only commands."""

from __future__ import annotations

from typing import Any

from axpipe import resources
from axpipe.recipe import libraries as recipes
from axpipe.recipe.hydra_env import hydra_environment, schema_overrides, translate_hydra_error
from axpipe.recipe.hydra_input import user_error
from axpipe.workspace import ProjectConfig


def compose_config(project: ProjectConfig, name: str, overrides: list[str]) -> Any:
    """The composed configuration of recipe ``name`` with ``overrides`` applied."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    with hydra_environment(project.root, recipes.libraries(project), []):
        try:
            with initialize_config_dir(config_dir=str(resources.conf_dir()), version_base="1.3"):
                return compose("config", overrides=schema_overrides([f"recipe={name}", *overrides]))
        except HydraException as error:
            raise translate_hydra_error(error, project) from error
        except (ValueError, RecursionError) as error:  # only those Hydra raises about its input
            translated = user_error(error, project, [name])
            if translated is None:
                raise
            raise translated from error


def composed_yaml(project: ProjectConfig, name: str, overrides: list[str], *, resolve: bool) -> str:
    """The composed recipe as YAML, as ``axpipe run recipe=NAME --cfg job`` would print it."""
    from omegaconf import OmegaConf

    config = compose_config(project, name, overrides)
    return str(OmegaConf.to_yaml(config, resolve=resolve))
