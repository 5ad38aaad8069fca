"""The supervision examples of docs/operations.md: the files parse, and the commands they run
behave as the docs say under the signals their supervisors send."""

from __future__ import annotations

import configparser
import getpass
import grp
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import ROOT, run_cli

from axpipe.cli import build_parser

SUPERVISION = ROOT / "docs" / "supervision"
AXPIPE_SCRIPT = Path(sys.executable).parent / "axpipe"


def rendered(name: str, project: Path, logs: Path | None = None) -> str:
    """An example file with its placeholders replaced by this machine's paths and user."""
    text = (SUPERVISION / name).read_text()
    user, group = getpass.getuser(), grp.getgrgid(os.getgid()).gr_name
    text = text.replace("/srv/project/.venv/bin/axpipe", str(AXPIPE_SCRIPT)).replace("/srv/project", str(project))
    text = text.replace("User=axpipe", f"User={user}").replace("Group=axpipe", f"Group={group}")
    text = text.replace("user=axpipe", f"user={user}")
    if logs is not None:
        text = text.replace("/var/log/axpipe", str(logs))
    assert "/srv/project" not in text
    return text


def unit(name: str, project: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # systemd keys are case-sensitive
    parser.read_string(rendered(name, project))
    return parser


def exec_start(name: str, project: Path) -> list[str]:
    return shlex.split(unit(name, project)["Service"]["ExecStart"])


@pytest.mark.parametrize("name", ["axpipe-runtime.service", "axpipe-loop.service", "axpipe-runtime.supervisord.conf"])
def test_operations_md_shows_each_shipped_file_as_it_is(name: str) -> None:
    assert f"```ini\n{(SUPERVISION / name).read_text()}```" in (ROOT / "docs" / "operations.md").read_text()


@pytest.mark.parametrize("name", ["axpipe-runtime.service", "axpipe-loop.service"])
def test_systemd_units_verify(name: str, repo: Path, tmp_path: Path) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed here; the structural tests still run")
    path = tmp_path / name
    path.write_text(rendered(name, repo))
    result = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # unknown keys and bad values are warnings: none allowed


def test_the_runtime_unit_restarts_after_crashes_but_not_after_runtime_stop(repo: Path) -> None:
    service = unit("axpipe-runtime.service", repo)["Service"]
    assert exec_start("axpipe-runtime.service", repo)[1:] == ["runtime", "start", "--sweep-interval", "60s"]
    assert service["WorkingDirectory"] == str(repo)
    assert (service["Restart"], service["KillSignal"], service["KillMode"]) == (
        "on-failure", "SIGTERM", "control-group")
    assert unit("axpipe-runtime.service", repo)["Install"]["WantedBy"] == "multi-user.target"


def test_the_loop_unit_never_restarts_a_settled_or_paused_goal(repo: Path) -> None:
    service = unit("axpipe-loop.service", repo)["Service"]
    assert service["Restart"] == "on-failure"
    assert set(service["RestartPreventExitStatus"].split()) == {"2", "3", "4", "6"}
    command = exec_start("axpipe-loop.service", repo)
    args = build_parser().parse_args(command[1:])  # a command line axpipe accepts as written
    assert (args.command, args.action, args.interval, args.goal_id) == ("loop", "start", "10m", "keep-main-green")
    assert args.prompt == "check CI and fix any failure you find"


def _backends(project: Path) -> list[dict[str, object]]:
    result = run_cli("runtime", "status", "--json", cwd=project)
    backends: list[dict[str, object]] = json.loads(result.stdout)["backends"]
    return [backend for backend in backends if backend["alive"]]


def _wait(predicate: Callable[[], bool], timeout: float = 60.0) -> None:
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError("timed out")


def test_the_runtime_units_command_stops_cleanly_on_sigterm(repo: Path) -> None:
    command = exec_start("axpipe-runtime.service", repo)
    backend = subprocess.Popen(command, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        _wait(lambda: len(_backends(repo)) == 1)
        backend.send_signal(signal.SIGTERM)  # what `systemctl stop` sends (KillSignal=)
        output, _ = backend.communicate(timeout=30)  # within TimeoutStopSec
        assert backend.returncode == 0, output
        assert "stopping: SIGTERM" in output
        assert _backends(repo) == []
    finally:
        if backend.poll() is None:
            backend.kill()
            backend.communicate()


@pytest.mark.slow
def test_supervisord_runs_restarts_and_stops_the_backend(repo: Path, tmp_path: Path) -> None:
    """supervisord (installed from PyPI into a venv of its own) reads the shipped program
    section, starts the backend, restarts it after a SIGKILL, and stops it with SIGTERM."""
    venv = tmp_path / "supervisor-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    installed = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "supervisor==4.3.0"],
                               capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    conf_d, logs = tmp_path / "conf.d", tmp_path / "logs"
    conf_d.mkdir()
    logs.mkdir()
    (conf_d / "axpipe-runtime.conf").write_text(rendered("axpipe-runtime.supervisord.conf", repo, logs))
    socket = tmp_path / "supervisor.sock"
    config = tmp_path / "supervisord.conf"
    config.write_text(f"""[supervisord]
nodaemon=true
logfile={tmp_path / 'supervisord.log'}
pidfile={tmp_path / 'supervisord.pid'}

[unix_http_server]
file={socket}

[rpcinterface:supervisor]
supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface

[supervisorctl]
serverurl=unix://{socket}

[include]
files = {conf_d}/*.conf
""")
    daemon = subprocess.Popen([str(venv / "bin" / "supervisord"), "-c", str(config)], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)

    def ctl(*args: str) -> str:
        return subprocess.run([str(venv / "bin" / "supervisorctl"), "-c", str(config), *args],
                              capture_output=True, text=True).stdout

    try:
        _wait(lambda: len(_backends(repo)) == 1)
        first = _backends(repo)[0]
        os.kill(int(first["pid"]), signal.SIGKILL)  # type: ignore[call-overload]
        _wait(lambda: [backend["pid"] for backend in _backends(repo)] not in ([], [first["pid"]]))
        _wait(lambda: "RUNNING" in ctl("status", "axpipe-runtime"))  # after startsecs
        assert "axpipe-runtime: stopped" in ctl("stop", "axpipe-runtime")
        assert _backends(repo) == []
        log = (logs / "runtime.log").read_text()
        assert log.count("started (pid") == 2 and "stopping: SIGTERM" in log
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.communicate(timeout=60)
    assert run_cli("runtime", "status", cwd=repo).exit_code == 1
