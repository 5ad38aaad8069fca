"""Shell completion of ``axpipe run``: each script is installed the way a user would
(``eval``/``source`` of ``axpipe run --shell-completion install=SHELL``) in a real shell,
which then completes real command lines against a real project's recipe search path."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from helpers import hello_library, run_cli

from axpipe import workspace
from axpipe.recipe import libraries as recipes
from axpipe.run import shell_completion


@pytest.fixture
def project(repo: Path) -> Path:
    """A project with its own recipe library next to the built-in recipes."""
    return hello_library(repo, "name: hello\ndescription: A goal without a budget.\n")


@pytest.fixture
def shell_env(tmp_path: Path) -> dict[str, str]:
    """The test's environment with a home of its own (shells may write history or
    variables there) and the installed ``axpipe`` program on PATH, as for a user."""
    assert shutil.which("axpipe"), "the axpipe console script is not on PATH"
    home = tmp_path / "home"
    home.mkdir()
    return {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local/share")}


def recipe_names(project: Path) -> list[str]:
    """Every recipe name on the project's search path, as ``axpipe recipes list`` finds them."""
    names = sorted(entry.name for entry in recipes.discover(workspace.load_project(project)))
    assert "hello" in names and "demo" in names  # the project's library and the built-in one
    return names


def shell(argv: list[str], script: str, project: Path, env: dict[str, str]) -> str:
    completed = subprocess.run([*argv, script], cwd=project, env=env, capture_output=True,
                               text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    return completed.stdout


def cases(output: str) -> list[list[str]]:
    """The candidate lists a driver script printed, each after a line ``@@``."""
    return [block.splitlines() for block in output.split("@@\n")[1:]]


BASH_DRIVER = r"""
breaks_before=$COMP_WORDBREAKS
eval "$(axpipe run --shell-completion install=bash)"
[[ $COMP_WORDBREAKS == "$breaks_before" ]] || echo "COMP_WORDBREAKS changed"
complete -p run 2>/dev/null && echo "registered for run"
spec=$(complete -p axpipe) && echo "$spec"
function=$(sed -E 's/.* -F ([^ ]+) .*/\1/' <<< "$spec")
# What bash does on TAB: COMP_LINE/COMP_POINT, the words split at COMP_WORDBREAKS, then
# the function with the program, the current word and the one before.
complete_line() {
    COMP_LINE=$1 COMP_POINT=${#1}
    shift
    COMP_WORDS=("$@") COMP_CWORD=$(( $# - 1 )) COMPREPLY=()
    "$function" axpipe "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    echo @@
    (( ${#COMPREPLY[@]} == 0 )) || printf '%s\n' "${COMPREPLY[@]}"
}
complete_line 'axpipe run rec' axpipe run rec
complete_line 'axpipe run recipe=' axpipe run recipe = ''
complete_line 'axpipe run recipe=demo goal.bud' axpipe run recipe = demo goal.bud
complete_line 'axpipe run --json recipe=hello goal.budget.time=30m goal.budget.' \
    axpipe run --json recipe = hello goal.budget.time = 30m goal.budget.
complete_line 'axpipe run --event-log ' axpipe run --event-log ''
complete_line 'axpipe recipes ' axpipe recipes ''
"""


def test_bash_completes_recipes_and_keys(project: Path, shell_env: dict[str, str]) -> None:
    output = shell(["bash", "--norc", "--noprofile", "-c"], BASH_DRIVER, project, shell_env)
    head = output.split("@@\n")[0].splitlines()
    # Registered for the program `axpipe` only, falling back to file names; the user's
    # COMP_WORDBREAKS (other commands' completion) is left alone.
    assert len(head) == 1 and head[0].endswith(" axpipe"), head
    assert "-o default" in head[0] and "-o nospace" in head[0]
    rec, recipe, budget, added, event_log, other = cases(output)
    assert rec == ["recipe="]
    # Readline replaces only what follows the `=`: the names come without `recipe=`.
    assert recipe == recipe_names(project)
    assert budget == ["goal.budget."]
    # `hello` has no budget; the typed schema override composes as it does for a run.
    assert added == ["goal.budget.time="]
    assert event_log == [] and other == []  # a path, another subcommand: the shell's file names


FISH_DRIVER = """
axpipe run --shell-completion install=fish | source
for line in 'axpipe run rec' 'axpipe run recipe=' 'axpipe run recipe=demo goal.bud' 'axpipe recipes REA'
    echo @@
    complete -C "$line"
end
axpipe run --shell-completion uninstall=fish | source
echo @@
complete -C 'axpipe run rec'
"""


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completes_recipes_and_keys(project: Path, shell_env: dict[str, str]) -> None:
    output = shell(["fish", "--no-config", "-c"], FISH_DRIVER, project, shell_env)
    rec, recipe, budget, other, uninstalled = [[line.split("\t")[0] for line in block]
                                               for block in cases(output)]
    assert rec == ["recipe="]
    assert recipe == [f"recipe={name}" for name in recipe_names(project)]
    assert budget == ["goal.budget."]
    assert other == ["README.md"]  # other subcommands keep file names
    assert uninstalled == ["recipes/"]  # file names again, as before the install


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completes_recipes_and_keys(project: Path, shell_env: dict[str, str], tmp_path: Path) -> None:
    """An interactive zsh on a pty: the line is typed, TAB pressed, and a key bound to a
    widget records the line as completed; a wrapper around ``compadd`` records what zsh
    offered (it does not change what is added)."""
    import pexpect

    record = tmp_path / "zsh-record"
    child = pexpect.spawn("zsh", ["-f", "-i"], cwd=str(project), encoding="utf-8", timeout=30,
                          env={**shell_env, "RECORD": str(record), "TERM": "dumb"}, dimensions=(40, 200))
    try:
        for line in ("autoload -Uz compinit && compinit -u -D",
                     'eval "$(axpipe run --shell-completion install=zsh)"',
                     'compadd() { local -a m; builtin compadd -O m "$@"; print -rl -- "${m[@]/#/offered:}" >> $RECORD;'
                     ' builtin compadd "$@" }',
                     # ^X starts other bindings too: zsh waits KEYTIMEOUT (0.4 s) for more keys.
                     'record-line() { print -r -- "line:$BUFFER" >> $RECORD; BUFFER= }; zle -N record-line;'
                     ' bindkey "^X" record-line; KEYTIMEOUT=1',
                     "print READY"):
            child.sendline(line)
        child.expect("READY\r?\n")

        def tab(text: str) -> tuple[list[str], str]:
            record.write_text("")
            child.send(text + "\t\x18")
            give_up = time.monotonic() + 30
            while "line:" not in (recorded := record.read_text()):
                assert time.monotonic() < give_up, f"zsh did not complete {text!r}: {child.before!r}"
                time.sleep(0.05)
            lines = recorded.splitlines()
            offered = sorted({line.removeprefix("offered:") for line in lines if line.startswith("offered:")})
            return offered, lines[-1].removeprefix("line:")

        assert tab("axpipe run rec") == (["recipe="], "axpipe run recipe=")
        assert tab("axpipe run recipe=") == ([f"recipe={name}" for name in recipe_names(project)], "axpipe run recipe=")
        assert tab("axpipe run recipe=demo goal.bud") == (["goal.budget."], "axpipe run recipe=demo goal.budget.")
        assert tab("axpipe recipes REA") == (["README.md"], "axpipe recipes README.md ")
    finally:
        child.sendline("exit")
        child.close(force=True)


def test_bash_uninstall_removes_the_completion(project: Path, shell_env: dict[str, str]) -> None:
    output = shell(["bash", "--norc", "--noprofile", "-c"], """
eval "$(axpipe run --shell-completion install=bash)"
eval "$(axpipe run --shell-completion uninstall=bash)"
complete -p axpipe 2>/dev/null || echo "no completion for axpipe"
declare -F _axpipe_completion || echo "no completion function"
""", project, shell_env)
    assert output == "no completion for axpipe\nno completion function\n"


def test_zsh_and_bash_get_one_script() -> None:
    """Hydra's help tells zsh users to eval the bash script; both names print the script
    that works in either shell."""
    assert shell_completion.script("install", "bash") == shell_completion.script("install", "zsh")
    assert shell_completion.script("uninstall", "bash") == shell_completion.script("uninstall", "zsh")


def test_unknown_shell_is_refused(project: Path) -> None:
    refused = run_cli("run", "--shell-completion", "install=powershell", cwd=project)
    assert refused.exit_code == 2
    assert refused.stdout == ""
    assert "No completion plugin for 'powershell' found" in refused.stderr
