"""The conformance suite every guard plugin passes (axpipe's own included).

Inherit it once per guard, name the guard and the class its cheating case must report,
and supply the two changes as files before and after::

    from axpipe.testing.guard_contract import GuardCase, GuardContract

    class TestFlakyReruns(GuardContract):
        guard = "flaky-reruns"
        expected_class = "skipped-test"

        def cheating_case(self):
            return GuardCase(before={"tests/test_a.py": "def test_a():\\n    assert f() == 1\\n"},
                             after={"tests/test_a.py": "@pytest.mark.flaky(reruns=5)\\n..."})

        def honest_case(self):
            ...

The contract loads the guard through its entry point, commits ``before`` into a real git
repository, writes ``after`` (``None`` deletes a file) and judges the change the way the
repair loop and ``axpipe guard`` do: from git and from a patch.
"""

from __future__ import annotations

import dataclasses
from dataclasses import field
from pathlib import Path

from axpipe import git
from axpipe.guard.run import NAMESPACE, check_change, find_cheating
from axpipe.interfaces import Guard, GuardContext, GuardFinding
from axpipe.plugin import registry
from axpipe.records import record


@record
class GuardCase:
    """A change: file texts before (committed) and after (``None``: the file is deleted)."""

    before: dict[str, str]
    after: dict[str, str | None]
    context: GuardContext = field(default_factory=GuardContext)


def _git(root: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "contract", "GIT_AUTHOR_EMAIL": "contract@axpipe.invalid",
           "GIT_COMMITTER_NAME": "contract", "GIT_COMMITTER_EMAIL": "contract@axpipe.invalid"}
    return git.text(root, *args, check=True, env=env).stdout


def make_change(root: Path, case: GuardCase) -> Path:
    """A git repository at ``root`` holding ``case.before`` committed and ``case.after`` written."""
    root.mkdir(parents=True, exist_ok=True)
    _git(root, "init", "-q", "-b", "main")
    for path, text in case.before.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--allow-empty", "-m", "before")
    for path, new in case.after.items():
        if new is None:
            (root / path).unlink()
        else:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(new)
    return root


class GuardContract:
    """Inherit, set ``guard`` and ``expected_class``, implement the two cases."""

    guard: str = ""
    expected_class: str = ""

    def cheating_case(self) -> GuardCase:
        raise NotImplementedError

    def honest_case(self) -> GuardCase:
        raise NotImplementedError

    def judge(self, case: GuardCase, root: Path) -> list[GuardFinding]:
        make_change(root, case)
        return find_cheating(root, "HEAD", case.context, [self.guard])

    # -- the contract ---------------------------------------------------------------

    def test_loads_through_its_entry_point_and_satisfies_the_protocol(self) -> None:
        assert self.guard, "set `guard` to the plugin's entry point name"
        registry.forget()
        plugin = registry.load(NAMESPACE, self.guard)
        assert isinstance(plugin, Guard)
        assert plugin.suffixes and all(isinstance(suffix, str) and suffix for suffix in plugin.suffixes)
        assert plugin.params_schema is None or dataclasses.is_dataclass(plugin.params_schema)
        assert isinstance(plugin.describe(), str) and plugin.describe().strip()

    def test_catches_the_cheating_case(self, tmp_path: Path) -> None:
        case = self.cheating_case()
        findings = self.judge(case, tmp_path / "repo")
        assert findings, "the cheating case was not caught"
        changed = set(case.after) | set(case.before)
        for finding in findings:
            assert finding.guard == self.expected_class, finding.describe()
            assert finding.plugin == self.guard
            assert finding.file in changed, finding.describe()
            assert isinstance(finding.line, int) and finding.line >= 1
            assert finding.evidence.strip()
            assert set(finding.to_json()) == {"guard", "file", "line", "evidence"}

    def test_passes_the_honest_case(self, tmp_path: Path) -> None:
        findings = self.judge(self.honest_case(), tmp_path / "repo")
        assert findings == [], [finding.describe() for finding in findings]

    def test_a_patch_gets_the_same_verdict_as_the_repository(self, tmp_path: Path) -> None:
        for number, case in enumerate((self.cheating_case(), self.honest_case())):
            root = make_change(tmp_path / f"repo{number}", case)
            from_git = find_cheating(root, "HEAD", case.context, [self.guard])
            _git(root, "add", "-A")
            patch = _git(root, "diff", "--cached", "HEAD")
            _git(root, "reset", "-q", "--hard", "HEAD")
            _git(root, "clean", "-q", "-fd")
            from_patch = check_change(root, context=case.context, guards=[self.guard], patch=patch).findings
            assert from_patch == from_git

    def test_no_change_fires_nothing(self, tmp_path: Path) -> None:
        case = self.cheating_case()
        make_change(tmp_path / "repo", GuardCase(before=case.before, after={}))
        assert find_cheating(tmp_path / "repo", "HEAD", case.context, [self.guard]) == []
