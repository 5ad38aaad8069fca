"""HTML5 validity of generated pages, plus what a parser does not check: duplicate ids,
links to missing files or anchors, and anything fetched from the network."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from urllib.parse import unquote, urlsplit

import html5lib
from html5lib.constants import E as MESSAGES


def problems(path: Path) -> list[str]:
    """One line per problem of the page at ``path`` (none for a valid page)."""
    # strict=False collects every parse error with its position; strict=True stops at the first.
    parser = html5lib.HTMLParser(strict=False, namespaceHTMLElements=False)
    document = parser.parse(path.read_bytes())
    found = []
    for (line, column), code, values in parser.errors:
        message = MESSAGES.get(code, code) % values if isinstance(values, dict) else code
        found.append(f"{path.name}:{line}:{column}: {message}")
    ids = Counter(element.get("id") for element in document.iter() if element.get("id"))
    found += [f"{path.name}: duplicate id {name!r}" for name, count in ids.items() if count > 1]
    for element in document.iter():
        for attribute in ("href", "src"):
            url = element.get(attribute)
            if not url or url.startswith("data:"):
                continue
            parts = urlsplit(url)
            if parts.scheme:
                found.append(f"{path.name}: {element.tag} {attribute}={url!r} is not a relative link")
                continue
            if parts.path and not os.path.exists(path.parent / unquote(parts.path)):
                found.append(f"{path.name}: {element.tag} {attribute}={url!r} points to a missing file")
            if parts.fragment and not parts.path and parts.fragment not in ids:
                found.append(f"{path.name}: {element.tag} {attribute}={url!r} points to a missing anchor")
    return found


def outline(path: Path) -> list[str]:
    """What a page is made of, for a snapshot: its title, headings and table columns."""
    document = html5lib.parse(path.read_bytes(), namespaceHTMLElements=False)
    lines = []
    for element in document.iter():
        if element.tag in ("title", "h1", "h2", "h3"):
            lines.append(f"{element.tag}: {' '.join(''.join(element.itertext()).split())}")
        elif element.tag == "thead":
            lines.append("columns: " + " | ".join(''.join(cell.itertext()) for cell in element.iter("th")))
    return lines
