"""The one jinja2 environment that renders every prompt, plan and report.

``StrictUndefined``: a template that names something the context lacks is an error, not an
empty string a person (or an agent) would silently read. Templates shipped with axpipe live
in ``axpipe/jinja/``; recipe templates (``work.prompt``) are rendered from strings.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from axpipe.errors import ConfigError, Problem

TEMPLATE_DIR = Path(__file__).resolve().parent / "jinja"


@cache
def environment() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # prompts and Markdown, not HTML
    )


def render(name: str, **context: Any) -> str:
    """Render a template shipped with axpipe (``axpipe/jinja/<name>``)."""
    return str(environment().get_template(name).render(**context))


def render_string(text: str, *, path: str, **context: Any) -> str:
    """Render a recipe's template text; a mistake in it is a config error naming ``path``."""
    import jinja2

    try:
        return str(environment().from_string(text).render(**context))
    except jinja2.TemplateError as error:
        raise ConfigError([Problem(path, f"template error: {error}")]) from error
