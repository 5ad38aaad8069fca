"""The one jinja2 environment that renders every prompt, plan and report.

``StrictUndefined`` makes a misspelt variable an error instead of an empty string: a prompt
that silently lost the diff it was meant to carry would review nothing and look fine.
Rendering errors become :class:`TemplateError` (an input error) naming the template and the
line, so a bad prompt in a recipe is reported like any other bad value. Templates shipped
with axpipe live in ``axpipe/jinja/``; recipe templates are rendered from their text.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from axpipe.errors import InputError

if TYPE_CHECKING:  # jinja2 costs ~80 ms to import: only the commands that render pay it
    import jinja2

TEMPLATE_DIR = Path(__file__).resolve().parent / "jinja"

_environment: jinja2.Environment | None = None
_library_prompts: list[Path] = []


class TemplateError(InputError):
    """A template that does not parse, or uses a variable the context does not have."""


def environment() -> jinja2.Environment:
    """The shared environment (created on first use)."""
    global _environment
    if _environment is None:
        import jinja2

        _environment = jinja2.Environment(
            loader=_loader(),
            undefined=jinja2.StrictUndefined,
            autoescape=False,  # prompts and Markdown, never HTML
            keep_trailing_newline=True,
        )
    return _environment


def _loader() -> jinja2.BaseLoader:
    import jinja2

    folders = [str(folder) for folder in _library_prompts if folder.is_dir()]
    return jinja2.FileSystemLoader([*folders, str(TEMPLATE_DIR)])


def use_library_prompts(folders: list[Path]) -> None:
    """Look up prompt templates in ``folders`` first (each recipe library's ``prompts/``, in
    the libraries' precedence), then in axpipe's own: a team overrides ``turn.md.j2`` or
    ``told.md.j2`` by putting its own beside its recipes (docs/roles.md)."""
    global _library_prompts
    _library_prompts = list(folders)
    if _environment is not None:
        _environment.loader = _loader()
        if _environment.cache is not None:
            _environment.cache.clear()  # templates loaded from the folders before


def render(source: str, context: Mapping[str, Any], *, name: str) -> str:
    """Render template text ``source`` with ``context``; ``name`` says where the template came
    from (a config path or a file) in error messages."""
    import jinja2

    try:
        template = environment().from_string(source)
        return template.render(**context)
    except jinja2.TemplateSyntaxError as error:
        raise TemplateError(f"{name}: template syntax error on line {error.lineno}: {error.message}") from error
    except jinja2.UndefinedError as error:
        known = ", ".join(sorted(context)) or "none"
        raise TemplateError(f"{name}: {error.message}; variables available: {known}") from error


def render_file(template: str, **context: Any) -> str:
    """Render a template shipped with axpipe (``axpipe/jinja/<template>``)."""
    return str(environment().get_template(template).render(**context))
