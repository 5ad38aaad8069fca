"""Where the files shipped with axpipe live, installed or in a source checkout.

A wheel carries ``conf/`` and ``recipes/`` inside the package (``axpipe/_bundled/``); a
source checkout (and an editable install) has them next to the package.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _bundled(name: str) -> Path:
    installed = _PACKAGE / "_bundled" / name
    if installed.is_dir():
        return installed
    return _PACKAGE.parent / name


def conf_dir() -> Path:
    """Hydra's primary config folder."""
    return _bundled("conf")


def builtin_recipes_dir() -> Path:
    """The built-in recipe library."""
    return _bundled("recipes")


def samples_dir() -> Path:
    """Sample projects the demo copies into a temporary repository."""
    return _PACKAGE / "samples"
