"""axpipe.plugin.entrypoints reads ``*.dist-info`` / ``*.egg-info`` folders on sys.path directly;
these layouts are what pip and setuptools write."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from axpipe.plugin import entrypoints


def _dist(folder: Path, dirname: str, *, name: str | None, entry_points: str | None) -> None:
    info = folder / dirname
    info.mkdir(parents=True)
    if name is not None:
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n\nlong text\n")
    if entry_points is not None:
        (info / "entry_points.txt").write_text(entry_points)


@pytest.fixture
def search_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    monkeypatch.setattr(sys, "path", [str(first), str(second)])
    entrypoints.clear_cache()
    yield first, second
    entrypoints.clear_cache()


def test_the_first_copy_of_a_distribution_on_sys_path_wins(search_path: tuple[Path, Path]) -> None:
    first, second = search_path
    _dist(first, "acme_checks-2.0.dist-info", name="acme-checks",
          entry_points="[axpipe.checks]\nlines = acme_checks.v2:Lines\n")
    _dist(second, "acme_checks-1.0.dist-info", name="acme-checks",
          entry_points="[axpipe.checks]\nlines = acme_checks.v1:Lines\nold = acme_checks.v1:Old\n")

    declared = entrypoints.entry_points("axpipe.checks")

    assert [(entry.name, entry.value, entry.distribution) for entry in declared] == [
        ("lines", "acme_checks.v2:Lines", "acme-checks")]


def test_names_come_from_metadata_and_egg_info_folders_count(search_path: tuple[Path, Path]) -> None:
    first, second = search_path
    _dist(first, "Acme_Agents.egg-info", name="Acme.Agents",
          entry_points="[axpipe.agents]\nfixer = acme_agents:Fixer\n[console_scripts]\nacme = acme:main\n")
    _dist(second, "acme_agents-0.9.dist-info", name="acme-agents",
          entry_points="[axpipe.agents]\nshadowed = acme_agents_old:Fixer\n")
    _dist(second, "acme__agents-0.8.dist-info", name="acme..agents",  # PEP 503: the same name again
          entry_points="[axpipe.agents]\nalso-shadowed = acme_agents_older:Fixer\n")
    _dist(second, "no_metadata-1.0.dist-info", name=None, entry_points="[axpipe.agents]\nbare = bare:Agent\n")

    declared = entrypoints.entry_points("axpipe.agents")

    assert [(entry.name, entry.distribution, entry.module) for entry in declared] == [
        ("bare", "no_metadata", "bare"), ("fixer", "Acme.Agents", "acme_agents")]


def test_only_axpipe_groups_count_and_only_their_distributions_metadata_is_read(
        search_path: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    first, _ = search_path
    _dist(first, "plain-1.0.dist-info", name="plain", entry_points=None)
    _dist(first, "tool-1.0.dist-info", name="tool",
          entry_points="# comment\n[console_scripts]\ntool = tool:main\n[pytest11]\nmine = tool.plugin\n")
    _dist(first, "ours-1.0.dist-info", name="Ours", entry_points="[axpipe.checks]\nmine = ours:Check\n")
    (first / "not-a-distribution").mkdir()
    read: list[str] = []
    real = entrypoints._distribution_name

    def spy(info_dir: str) -> str | None:
        read.append(Path(info_dir).name)
        return real(info_dir)

    monkeypatch.setattr(entrypoints, "_distribution_name", spy)

    declared = entrypoints.entry_points("axpipe.checks")

    assert [(entry.name, entry.distribution) for entry in declared] == [("mine", "Ours")]
    assert read == ["ours-1.0.dist-info"]  # start-up: METADATA of unrelated distributions stays closed
