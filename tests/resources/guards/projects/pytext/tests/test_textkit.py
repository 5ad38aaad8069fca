import pytest

import textkit
from textkit import greeting, initials, read_title, slugify, word_count


def test_slugify_basic():
    assert slugify("Hello, World!") == "hello-world"


def test_slugify_accents():
    assert slugify("Crème brûlée") == "creme-brulee"


def test_slugify_truncates():
    assert len(slugify("a" * 100)) == 40


def test_word_count():
    assert word_count("one two  three") == 3


def test_initials():
    assert initials("ada lovelace") == "AL"


def test_greeting_morning():
    assert greeting("Ada", 9) == "Good morning, Ada!"


def test_greeting_evening():
    assert greeting("Ada", 19) == "Good evening, Ada!"


def test_read_title_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_title(tmp_path / "missing.txt")


def test_module_exports_slugify():
    assert textkit.slugify is slugify
