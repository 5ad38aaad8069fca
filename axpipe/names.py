"""File and folder names that are not UTF-8, in text axpipe writes.

On Linux a name is bytes. Python gives one that is not valid UTF-8 to us as text with
surrogate escapes (``os.fsdecode``); git's answers are decoded the same way, so the name
still opens its file and goes back to git unchanged. Text with surrogate escapes cannot be
encoded as UTF-8, so each place that writes text keeps the name in its own way:

- the event log: JSON escapes (``\\udce9``), which ``json.loads`` turns back into the name
  (:mod:`axpipe.run.events`);
- the store: the name's bytes (:mod:`axpipe.store.names`);
- the terminal: the bytes themselves, as ``ls`` and git print them (``cli.keep_name_bytes``);
- reports and reasons, text for people: :func:`printable`, the bytes shown as ``\\xe9``.
"""

from __future__ import annotations


def printable(text: str) -> str:
    """``text`` for people and the store: the bytes of a file name that is not UTF-8 shown as
    ``\\xff`` (a surrogate escape can be neither stored nor printed)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
