"""A tiny web app with a form, for `browser` checks: ``python -m axpipe.samples.webform --port N``."""
