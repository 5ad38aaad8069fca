"""The labelled corpus (tests/resources/guards): every cheating diff is caught by its
class and nothing else, every honest diff passes, in a real repository and as a patch."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from helpers import RESOURCES

from axpipe.interfaces import GuardClass, GuardFinding
from axpipe.testing.guard_corpus import CorpusCase, Workbench, load_corpus, score

CORPUS = RESOURCES / "guards"
CASES = load_corpus(CORPUS)


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workbench]:
    yield Workbench(CORPUS, tmp_path_factory.mktemp("corpus"))


def test_the_corpus_is_big_enough_and_covers_every_class() -> None:
    cheating = [case for case in CASES if not case.honest]
    honest = [case for case in CASES if case.honest]
    assert len(CASES) >= 60
    assert len(cheating) >= 40
    assert len(honest) >= 20
    assert {case.label for case in cheating} == set(GuardClass)
    for language in ("py-", ("js-", "ts-", "tsx-", "mjs-", "cjs-")):
        assert {case.label for case in cheating if case.id.startswith(language)} == set(GuardClass)
        assert any(case.honest for case in honest if case.id.startswith(language))
    assert all(case.file for case in cheating), "a cheating case names the file its finding must point at"


def test_the_corpus_holds_issue_21s_refactors_and_cheats() -> None:
    # Issue 21: at least 160 cases; at least 40 honest refactors of the kinds real history
    # shows and 20 cheats the text rules missed (corpus_meaning.py); every new cheat class.
    sys.path.insert(0, str(CORPUS))
    from corpus_meaning import CHEATS, HONEST_JAVASCRIPT, HONEST_PYTHON

    assert len(CASES) >= 160
    assert len(HONEST_PYTHON) + len(HONEST_JAVASCRIPT) >= 40 and len(CHEATS) >= 20
    assert {case.label for case in CHEATS} == {"deleted-test", "skipped-test", "loosened-assertion",
                                               "hardcoded-expected"}
    assert any(case.id.startswith(("js-", "ts-")) for case in CHEATS) and any(
        case.id.startswith("py-") for case in CHEATS)


def test_every_case_is_a_real_git_diff_of_its_project() -> None:
    # Regenerates every diff from corpus_*.py with real git and compares it with the stored one.
    completed = subprocess.run([sys.executable, str(CORPUS / "build.py"), "--check"], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stdout + completed.stderr


def _verdict(case: CorpusCase, findings: list[GuardFinding]) -> None:
    shown = "\n".join(finding.describe() for finding in findings)
    if case.honest:
        assert findings == [], f"honest diff rejected ({case.why}):\n{shown}"
        return
    assert {finding.guard for finding in findings} == {case.label}, f"{case.why}:\n{shown or '(nothing fired)'}"
    assert {finding.file for finding in findings} == {case.file}, shown


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_case_in_a_git_repository(case: CorpusCase, bench: Workbench) -> None:
    _verdict(case, bench.judge(case, "git"))


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_case_as_a_patch_beside_its_files(case: CorpusCase, bench: Workbench) -> None:
    _verdict(case, bench.judge(case, "patch"))


@pytest.mark.parametrize("case", [case for case in CASES if case.honest],
                         ids=[case.id for case in CASES if case.honest])
def test_a_patch_alone_never_rejects_an_honest_diff(case: CorpusCase, bench: Workbench) -> None:
    # Without files the guards see hunks only: they may miss things, but must not cry wolf.
    assert bench.judge(case, "patch-only") == []


def test_score_counts_catches_misses_and_false_alarms() -> None:
    cheat = CorpusCase("a", "p", "skipped-test", "", "")
    honest = CorpusCase("b", "p", "honest", "", "")
    skipped = GuardFinding("t.py", 1, "skipped-test", "x")
    loosened = GuardFinding("t.py", 2, "loosened-assertion", "y")
    scores = score([(cheat, [skipped, loosened]), (honest, [loosened]), (cheat, [])])
    assert (scores["skipped-test"].caught, scores["skipped-test"].missed) == (1, 1)
    assert scores["skipped-test"].recall == 0.5 and scores["skipped-test"].precision == 1.0
    assert scores["loosened-assertion"].false_alarms == 2 and scores["loosened-assertion"].precision == 0.0
