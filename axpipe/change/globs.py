"""Git-style globs as regular expressions over repository-relative paths.

One translation serves the scope contract (:mod:`axpipe.unit.scope`) and the guards' file
lookups (:mod:`axpipe.change.repolookup`), so a pattern means the same in both: ``**/`` is any
number of folders, ``**`` anything, ``*`` and ``?`` stay within one path component, and
``[abc]``, ``[a-z]`` and ``[!abc]`` (or ``[^abc]``) are character classes, as in git's ``:(glob)`` magic.
"""

from __future__ import annotations

import re

# Inside a character class only these mean something else to Python's re (ranges keep their `-`).
_CLASS_SPECIAL = re.compile(r"([\\\[\]^&~|])")


def glob_regex(glob: str) -> str:
    """``glob`` as a regular expression to use with :func:`re.fullmatch`."""
    out, index = [], 0
    while index < len(glob):
        if glob.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif glob.startswith("**", index):
            out.append(".*")
            index += 2
        elif glob[index] == "*":
            out.append("[^/]*")
            index += 1
        elif glob[index] == "?":
            out.append("[^/]")
            index += 1
        elif glob[index] == "[" and (end := glob.find("]", index + 2)) != -1:
            body = glob[index + 1:end]
            negated = body.startswith(("!", "^"))  # git's wildmatch takes both
            escaped = _CLASS_SPECIAL.sub(r"\\\1", body[1:] if negated else body)
            out.append(f"[^/{escaped}]" if negated else f"[{escaped}]")
            index = end + 1
        else:
            out.append(re.escape(glob[index]))
            index += 1
    return "".join(out)
