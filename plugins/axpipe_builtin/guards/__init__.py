"""axpipe's built-in repair guards (``axpipe.guards``): ``python`` and ``javascript``.

Both compare the old and new version of each changed file: Python through its AST,
JavaScript/TypeScript through tokens. See docs/guards.md for what each class catches.
"""
