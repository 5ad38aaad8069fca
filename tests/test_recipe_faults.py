"""Broken recipe libraries (issue 25): one bad file, one unreadable folder. Each is reported,
by name and with what is wrong, and every other recipe keeps working, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import CLI
from helpers import write_recipe

OK = """
name: ok
description: a recipe that works
goal:
  objective: "pass"
  acceptance:
    AC1: {tag: closes, text: "passes", check: pass}
  checks:
    - {id: pass, acceptance: [AC1], command: "true"}
"""


def test_a_recipe_file_that_is_not_utf8_is_reported_and_the_others_keep_working(cli: CLI, repo: Path) -> None:
    library = repo / "recipes"
    write_recipe(library, "ok", OK)
    (library / "latin.yaml").write_bytes(b"# @package _global_\nname: latin\ndescription: caf\xe9\n")
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    problem = "not valid UTF-8: byte 0xe9 on line 3 (offset 48)"

    listed = cli("recipes", "list")
    assert listed.exit_code == 0, listed.stderr
    assert listed.stderr == f"axpipe: warning: recipe 'latin' ({library / 'latin.yaml'}) cannot be used: {problem}\n"
    rows = {line.split()[0]: line for line in listed.stdout.splitlines()[1:-1]}
    assert rows["latin"].endswith(f"(unusable: {problem})") and rows["ok"].endswith("a recipe that works")
    entries = {item["name"]: item for item in json.loads(cli("recipes", "list", "--json").stdout)}
    assert (entries["latin"]["problem"], entries["ok"]["problem"]) == (problem, None)

    unknown = cli("run", "recipe=nosuch")
    assert unknown.exit_code == 2 and "internal error" not in unknown.stderr
    assert "nosuch" in unknown.stderr and "latin" in unknown.stderr + unknown.stdout

    added = cli("schedule", "add", "--daily", "11:00", "--tz", "UTC", "--recipe", "ok", "--id", "fine")
    assert added.exit_code == 0, added.stderr
    ran = cli("run", "recipe=ok")
    assert ran.exit_code == 0, ran.stdout + ran.stderr

    for command in (["run", "recipe=latin"], ["recipes", "show", "latin"]):
        named = cli(*command)
        assert named.exit_code == 2, (command, named.stderr)
        assert named.stderr == (f"axpipe: error: recipe 'latin' is invalid (1 problem):\n  - {problem}  "
                                f"(from {library / 'latin.yaml'})\nNothing was run and nothing was written.\n")
    refused = cli("schedule", "add", "--daily", "11:00", "--tz", "UTC", "--recipe", "latin", "--id", "bad")
    assert refused.exit_code == 2 and problem in refused.stderr, refused.stderr
