"""Broken recipe libraries (issue 25): one bad file, one unreadable folder. Each is reported,
by name and with what is wrong, and every other recipe keeps working, through the real CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import CLI
from fault_helpers import without_dac_override
from helpers import AXPIPE, write_recipe

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


def test_an_unreadable_library_folder_is_a_warning_and_lookups_agree(repo: Path) -> None:
    prefix, why = without_dac_override()
    if prefix is None:
        pytest.skip(why)
    library = repo / "mine"
    write_recipe(library, "mine", OK.replace("name: ok", "name: mine"))
    (repo / "axpipe.yaml").write_text("recipe_paths: [mine]\n")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*prefix, *AXPIPE, *args], cwd=repo, capture_output=True, text=True, timeout=120)

    warning = f"axpipe: warning: recipe library {library} (project (mine)) cannot be read: Permission denied; "
    try:
        library.chmod(0o000)  # neither listed nor entered
        listed = cli("recipes", "list")
        assert listed.returncode == 0 and "mine" not in listed.stdout
        assert listed.stderr == warning + "its recipes cannot be used\n"
        added = cli("schedule", "add", "--daily", "11:00", "--tz", "UTC", "--recipe", "mine", "--id", "a")
        ran = cli("run", "recipe=mine")
        for result in (added, ran):
            assert result.returncode == 2, result.stdout + result.stderr
            assert result.stderr.startswith(warning + "its recipes cannot be used\n")
            assert "unknown recipe 'mine'" in result.stderr or "Could not find 'recipe/mine'" in result.stderr
        library.chmod(0o111)  # entered, not listed: found by name by `run` and `schedule add` alike
        listed = cli("recipes", "list")
        assert listed.stderr == warning + "its recipes are found only by name and are not listed\n"
        added = cli("schedule", "add", "--daily", "11:00", "--tz", "UTC", "--recipe", "mine", "--id", "b")
        assert added.returncode == 0, added.stderr
        ran = cli("run", "recipe=mine")
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert ran.stderr == warning + "its recipes are found only by name and are not listed\n"
    finally:
        library.chmod(0o755)
