"""How the test adapters read and edit a gate's test command (plugins/axpipe_builtin/gate_*.py):
the runner found where it is in a shell line, its fail-fast options taken out, its report
option put in, and every other byte of the command kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from axpipe.interfaces import GateTestAdapter, GateTestRun
from axpipe.plugin import registry

JUNIT = Path("/r/j.xml")
PYTEST_TAIL = "--maxfail=0 --continue-on-collection-errors --junitxml=/r/j.xml"


def claimed(command: str | list[str]) -> GateTestRun | None:
    """What the first installed adapter that claims ``command`` makes of it."""
    for name in registry.names("axpipe.test_adapters"):
        plugin = registry.load("axpipe.test_adapters", name)
        if isinstance(plugin, GateTestAdapter):
            found = plugin.gate_command(command, JUNIT)
            if found is not None:
                return found
    return None


CASES = [
    ("pytest -xq tests", "pytest", f"pytest -q tests {PYTEST_TAIL}", ["-xq"]),
    ("python -m pytest -x", "pytest", f"python -m pytest {PYTEST_TAIL}", ["-x"]),
    # -rxX is -r with the value xX, not -x
    ("pytest -rxX -k 'a and b' --maxfail 3 tests/ || true", "pytest",
     f"pytest -rxX -k 'a and b' tests/ {PYTEST_TAIL} || true", ["--maxfail 3"]),
    ("PYTHONPATH=src python3 -X dev -m pytest --sw $ARGS \"a b\" > out.txt 2>&1", "pytest",
     f"PYTHONPATH=src python3 -X dev -m pytest $ARGS \"a b\" {PYTEST_TAIL} > out.txt 2>&1", ["--sw"]),
    ("uv run --with pytest pytest --exitfirst", "pytest", f"uv run --with pytest pytest {PYTEST_TAIL}",
     ["--exitfirst"]),
    ("coverage run -m pytest -x", "pytest", f"coverage run -m pytest {PYTEST_TAIL}", ["-x"]),
    ("cd web && python -m pytest -- tests", "pytest", f"cd web && python -m pytest {PYTEST_TAIL} -- tests", []),
    ("python -m pytest --junitxml=out/j.xml", "pytest",
     "python -m pytest --junitxml=out/j.xml --maxfail=0 --continue-on-collection-errors", []),
    ("python -m unittest -fv discover -s tests", "unittest", "python -m unittest -v discover -s tests", ["-fv"]),
    ("npx vitest run --bail=1", "vitest",
     "npx vitest run --reporter=default --reporter=junit --outputFile.junit=/r/j.xml --bail=0", ["--bail=1"]),
    ("vitest --reporter=dot", "vitest", "vitest --reporter=dot --reporter=junit --outputFile.junit=/r/j.xml --bail=0",
     []),
    ("pnpm exec jest --bail 2 src", "jest", "pnpm exec jest src --json --outputFile=/r/j.xml.jest.json --bail=0",
     ["--bail 2"]),
    ("node --test --test-reporter dot test/", "node --test",
     "node --test --test-reporter={reporter} --test-reporter-destination=/r/j.xml --test-reporter dot "
     "--test-reporter-destination=stdout test/", []),
]


@pytest.mark.parametrize("command, runner, edited, removed", CASES, ids=[case[0] for case in CASES])
def test_a_runner_is_found_and_edited_as_written(command: str, runner: str, edited: str, removed: list[str]) -> None:
    from axpipe_builtin.gate_node import REPORTER

    found = claimed(command)
    assert found is not None
    assert (found.runner, found.command, found.removed) == (runner, edited.format(reporter=REPORTER), removed)


def test_a_command_given_as_a_list_is_edited_as_a_list() -> None:
    found = claimed(["python", "-m", "pytest", "-x", "tests dir"])
    assert found is not None
    assert found.command == ["python", "-m", "pytest", "tests dir", *PYTEST_TAIL.split()]


@pytest.mark.parametrize("command", ["make test", "npm test", "python -c 'import pytest'", "node script.js --test",
                                     "tox -e py311", "vitest run --outputFile=mine.json"])
def test_other_commands_are_left_to_junit_xml(command: str) -> None:
    assert claimed(command) is None
