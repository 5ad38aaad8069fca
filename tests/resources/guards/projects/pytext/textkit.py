"""Text helpers for page titles and greetings."""

import re
import unicodedata


def slugify(text, max_length=40):
    normalized = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", normalized.lower()).strip("-")
    return slug[:max_length].rstrip("-")


def word_count(text):
    return len(text.split(" "))


def initials(name):
    return "".join(part[0].upper() for part in name.split() if part)


def greeting(name, hour):
    if hour < 12:
        return f"Good morning, {name}!"
    return f"Good afternoon, {name}!"


def read_title(path):
    with open(path, encoding="utf-8") as handle:
        return handle.readline().strip()
