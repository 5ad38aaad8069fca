"""The four coding CLIs at their pinned versions, installed once and cached between runs.

npm packages go into ``<cache>/<name>-<version>/`` with ``npm install --prefix`` (never
``--ignore-scripts`` or ``--omit=optional``: claude-code's postinstall puts its native
binary in place, codex's binary is an optional dependency); aider into a venv of its own
made with a Python 3.10..3.12 (aider-chat 0.86.2 requires ``<3.13``). A ``.installed``
file is written last, so a half-done install is redone, never used. The cache is
``$AXPIPE_AGENT_CLIS`` or ``~/.cache/axpipe-agent-clis``; ``.ci/run`` fills it before the
suite, so the tests find it warm.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

# Bump together with docs/agents.md (the versions the presets were proven against).
PINS = {
    "claude-code": ("npm", "@anthropic-ai/claude-code", "2.1.337", "claude"),
    "codex": ("npm", "@openai/codex", "0.171.0", "codex"),
    "gemini-cli": ("npm", "@google/gemini-cli", "0.61.0", "gemini"),
    "aider": ("pip", "aider-chat", "0.86.2", "aider"),
}
AIDER_PYTHONS = ("python3.12", "python3.11", "python3.10")


def cache_root() -> Path:
    return Path(os.environ.get("AXPIPE_AGENT_CLIS") or os.path.expanduser("~/.cache/axpipe-agent-clis"))


def folder(kind: str) -> Path:
    _, _, version, _ = PINS[kind]
    return cache_root() / f"{kind}-{version}"


def bin_dir(kind: str) -> Path:
    registry = PINS[kind][0]
    return folder(kind) / ("node_modules/.bin" if registry == "npm" else "bin")


def unavailable(kind: str) -> str | None:
    """Why ``kind`` cannot be installed on this machine (None: it can)."""
    if PINS[kind][0] == "npm":
        return None if shutil.which("npm") and shutil.which("node") else "Node.js and npm are not installed"
    return None if aider_python() else f"no {', '.join(AIDER_PYTHONS)} to make aider's venv (it needs <3.13)"


def aider_python() -> str | None:
    """A Python aider-chat installs on: this one when it is 3.10..3.12, else the first of
    ``AIDER_PYTHONS`` that really runs (a pyenv shim may name a version it cannot start)."""
    if (3, 10) <= sys.version_info[:2] <= (3, 12):
        return sys.executable
    for name in AIDER_PYTHONS:
        found = shutil.which(name)
        if found and subprocess.run([found, "-c", "import sys; assert (3, 10) <= sys.version_info[:2] <= (3, 12)"],
                                    capture_output=True).returncode == 0:
            return found
    return None


def install(kind: str) -> Path:
    """The folder with ``kind``'s program, installed if the cache lacks it; raises with the
    installer's output when the install fails."""
    registry, package, version, program = PINS[kind]
    target = folder(kind)
    marker = target / ".installed"
    if marker.is_file() and (bin_dir(kind) / program).exists():
        return bin_dir(kind)
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    if registry == "npm":
        command = ["npm", "install", "--no-save", "--no-audit", "--no-fund", "--loglevel=error",
                   "--prefix", str(target), f"{package}@{version}"]
        steps = [command]
    else:
        python = aider_python()
        assert python is not None
        steps = [[python, "-m", "venv", str(target)],
                 [str(target / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                  f"{package}=={version}"]]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=1200)
        if done.returncode != 0:
            raise RuntimeError(f"installing {package}@{version} failed: {' '.join(step)}\n{done.stdout}\n{done.stderr}")
    marker.write_text(f"{package} {version}\n")
    return bin_dir(kind)


if __name__ == "__main__":  # .ci/run: python tests/agent_clis.py
    for name in PINS:
        reason = unavailable(name)
        print(f"{name}: {reason}" if reason else f"{name}: {install(name)}")
