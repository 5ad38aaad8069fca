"""Shell completion for ``axpipe run`` (bash, zsh, fish).

Hydra prints its completion scripts from ``sys.argv[0]``, which is ``axpipe run`` here: the
bash script registers the commands ``axpipe`` *and* ``run`` and asks ``axpipe -sc
query=bash`` (an unknown subcommand), the fish script is refused by ``complete`` ("too many
arguments"). So axpipe prints its own scripts for ``--shell-completion install=SHELL`` and
``uninstall=SHELL``: they complete only ``axpipe run ...`` (other subcommands keep the
shell's default, file names) and call back ``axpipe run --shell-completion query=SHELL``.
Hydra still answers the query, from the command line that :func:`hydra_line` gives it.

One script serves bash and zsh, because Hydra's help tells zsh users to ``eval`` the bash
one: it defines a native zsh completion function when ``$ZSH_VERSION`` is set.
"""

from __future__ import annotations

import os

from axpipe.recipe.hydra_env import schema_overrides

SHELLS = ("bash", "zsh", "fish")
_FLAGS = ("-sc", "--shell-completion")

_BASH_AND_ZSH = r"""
if [ -n "${ZSH_VERSION-}" ]; then
    # zsh: words and CURRENT come from the completion system (compinit).
    _axpipe_completion() {
        if (( CURRENT > 2 )) && [[ $words[2] == run && $words[CURRENT-1] != --event-log ]]; then
            local line="${(j: :)words[1,CURRENT-1]} $PREFIX"
            local -a choices
            choices=(${=$(COMP_LINE=$line "$words[1]" run --shell-completion query=zsh 2>/dev/null)})
            compadd -S '' -a choices && return 0
        fi
        _default
    }
    if (( $+functions[compdef] )); then
        compdef _axpipe_completion axpipe
    else
        print -u2 "axpipe completion: load zsh's completion system first (autoload -Uz compinit && compinit)"
    fi
else
    _axpipe_completion() {
        # Only `axpipe run ...`; nothing else to offer falls back to file names (-o default).
        local line=${COMP_LINE:0:COMP_POINT} program sub rest
        read -r program sub rest <<< "$line"
        [[ $sub == run && ( -n $rest || $line == *[[:space:]] ) ]] || return 0
        local cur=${line##*[[:space:]]} before=${line%[[:space:]]*}
        [[ ${before##*[[:space:]]} == --event-log ]] && return 0
        # Readline replaces only the text after the word's last COMP_WORDBREAKS character
        # (`=`, `:`), so that much is cut from each candidate; COMP_WORDBREAKS is left as is.
        local keep=${cur%"${cur##*[${COMP_WORDBREAKS:- }]}"} choices candidate
        local -a candidates
        choices=$(COMP_LINE=$line COMP_POINT=${#line} "$program" run --shell-completion query=bash 2>/dev/null) \
            || return 0
        read -r -a candidates <<< "$choices"
        COMPREPLY=()
        for candidate in "${candidates[@]}"; do
            [[ $candidate == "$cur"* ]] && COMPREPLY+=("${candidate#"$keep"}")
        done
        return 0
    }
    complete -o nospace -o default -F _axpipe_completion axpipe
fi
"""

_BASH_AND_ZSH_UNINSTALL = r"""
if [ -n "${ZSH_VERSION-}" ]; then
    (( $+functions[compdef] )) && compdef -d axpipe
else
    complete -r axpipe 2>/dev/null
fi
unset -f _axpipe_completion
"""

_FISH = r"""
function __axpipe_completing_run --description 'Is this `axpipe run ...`, past the word run?'
    set -l tokens (commandline -opc)
    test (count $tokens) -ge 2; and test "$tokens[2]" = run; and test "$tokens[-1]" != --event-log
end
function __axpipe_run_candidates --description 'Recipes and keys from `axpipe run`'
    set -l tokens (commandline -opc)
    COMP_LINE=(commandline -cp) $tokens[1] run --shell-completion query=fish 2>/dev/null
end
complete -c axpipe -n __axpipe_completing_run -f -a '(__axpipe_run_candidates)'
"""

_FISH_UNINSTALL = r"""
complete -e -c axpipe
functions -e __axpipe_completing_run __axpipe_run_candidates
"""


def request(argv: list[str]) -> tuple[str, str] | None:
    """``(action, shell)`` when ``argv`` is exactly a completion request for a known shell
    (``-sc install=bash``); anything else is Hydra's to accept or refuse."""
    if len(argv) != 2 or not any(flag in argv for flag in _FLAGS):
        return None
    action, _, shell = next(item for item in argv if item not in _FLAGS).partition("=")
    if action in ("install", "uninstall", "query") and shell in SHELLS:
        return action, shell
    return None


def script(action: str, shell: str) -> str:
    """The script that ``install`` or ``uninstall`` prints for ``shell``."""
    if shell == "fish":
        text = _FISH if action == "install" else _FISH_UNINSTALL
    else:
        text = _BASH_AND_ZSH if action == "install" else _BASH_AND_ZSH_UNINSTALL
    return text.strip("\n") + "\n"


def hydra_line(line: str) -> str | None:
    """The command line Hydra's query should complete, from the shell's ``COMP_LINE`` (up
    to the cursor), or ``None`` when there is nothing to offer.

    Hydra drops the first word as the program name, so ``axpipe run`` becomes one word;
    axpipe's own flags go (Hydra would read them as overrides), and schema keys become
    ``++KEY=VALUE`` as :func:`axpipe.recipe.hydra_env.schema_overrides` makes them for a run, so
    a key the recipe leaves at its default still composes.
    """
    words = line.split()
    current = "" if not line or line[-1].isspace() else words.pop()
    if words[1:2] == ["run"]:
        words = words[2:]
    elif words:
        words = words[1:]
    kept: list[str] = []
    items = iter(words)
    for word in items:
        if word == "--event-log":
            if next(items, None) is None:
                return None  # its value: a path, the shell's own file completion
        elif word not in ("--json", "--version") and not word.startswith("--event-log="):
            kept.append(word)
    return " ".join(["axpipe", *schema_overrides(kept), current])


def intercept(argv: list[str]) -> int | None:
    """Handle a completion request before Hydra does: print the install or uninstall
    script (exit 0), or point ``COMP_LINE`` at what Hydra's query should complete (``None``:
    let Hydra answer). ``None`` too for anything that is not a completion request."""
    wanted = request(argv)
    if wanted is None:
        return None
    action, shell = wanted
    if action != "query":
        print(script(action, shell), end="")
        return 0
    line = hydra_line(os.environ.get("COMP_LINE", ""))
    if line is None:
        return 0
    # Hydra's query reads COMP_LINE; this process exists only to answer it.
    os.environ["COMP_LINE"] = line
    return None
