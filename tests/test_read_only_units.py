"""Read-only units (AXPIPE_ROLE qa, judge, prototype, reviewer) may not change axpipe's state:
every command that would is refused (exit 2) before it touches anything. The unit's hard
stop is in test_bounces.py; here the CLI's allowlist, through the real CLI."""

from __future__ import annotations

from pathlib import Path

from conftest import CLI
from helpers import hello_library, tree

CHANGES_STATE = [
    ["run", "recipe=hello"],
    ["verify", "greet"],
    ["goal", "clear"],
    ["goal", "pause"],
    ["goal", "resume"],
    ["schedule", "add", "--daily", "03:45", "--recipe", "hello"],
    ["schedule", "delete", "nightly"],
    ["loop", "stop"],
    ["runtime", "start"],
    ["repair", "true"],
    ["review", "round"],
]


def refused(cli: CLI, command: list[str], role: str) -> None:
    result = cli(*command, env={"AXPIPE_ROLE": role})
    shown = " ".join(command[:2]) if command[0] in ("goal", "schedule", "loop", "runtime", "review") else command[0]
    assert result.exit_code == 2, (command, result.stdout, result.stderr)
    assert result.stderr.startswith(f"axpipe: error: `axpipe {shown}` changes axpipe's state, and this is a "
                                    f"read-only {role} unit (AXPIPE_ROLE={role}): refused"), result.stderr


def test_every_state_changing_command_is_refused_in_a_read_only_unit(cli: CLI, repo: Path) -> None:
    root = hello_library(repo)
    before = tree(root)
    for command in CHANGES_STATE:
        refused(cli, command, "qa")
    for role in ("judge", "prototype", "reviewer"):
        refused(cli, ["schedule", "delete", "nightly"], role)
    assert tree(root) == before  # nothing was written: no .axpipe/, no store


def test_reading_is_allowed_and_other_roles_are_not_read_only(cli: CLI, repo: Path) -> None:
    root = hello_library(repo)
    for command in (["schedule", "list", "--json"], ["recipes", "list"], ["plugins", "list"], ["loop", "status"]):
        result = cli(*command, env={"AXPIPE_ROLE": "qa"})
        assert "refused" not in result.stderr and result.exit_code in (0, 1), (command, result.stderr)
    assert cli("run", "recipe=hello", env={"AXPIPE_ROLE": "implementer"}).exit_code == 0
    assert (root / ".axpipe" / "state.db").is_file()
