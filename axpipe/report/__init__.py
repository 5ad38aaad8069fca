"""``axpipe report``: the project's evidence as static HTML pages and JSON (DESIGN §17).

:mod:`collect` gathers the data from the store and the run folders (:mod:`folders`),
:mod:`render` writes the pages from jinja2 templates (``templates/``), :mod:`trend` draws
the checks-over-time figure as inline SVG.
"""
