"""The fallback when only a patch's hunks are known (the file is not on disk, or the patch
does not apply to it, or a side does not parse): line rules over removed and added lines.

It sees tests removed (their definition line gone), skip/only/todo markers added,
assertion lines removed or weakened, and new empty handlers. It cannot follow a test
renamed in another file, compare tolerances, or see hardcoded values: those need whole
files. docs/guards.md has the table.
"""

from __future__ import annotations

import re

from axpipe.interfaces import ChangedFile, GuardClass
from axpipe.records import record

from .judge_tests import Found


@record(frozen=True)
class HunkRules:
    test: re.Pattern[str]            # group 1: the test's name or title
    skip: re.Pattern[str]            # a line that skips or marks expected-to-fail
    only: re.Pattern[str] | None     # a line that focuses one test (skipping the rest)
    strong: re.Pattern[str]          # an equality assertion
    weak: re.Pattern[str]            # a truthiness assertion
    empty: re.Pattern[str]           # a tautology (assert True)
    swallow: re.Pattern[str]         # a one-line handler that discards
    handler_head: re.Pattern[str]    # a handler's first line, when its body follows
    discard_body: re.Pattern[str]    # a body line that does nothing
    quiet_body: re.Pattern[str]      # a body line that only leaves or logs
    broad_head: re.Pattern[str]      # a handler that catches everything
    rethrow: re.Pattern[str]         # a body line that raises again
    raises: re.Pattern[str]          # an expected-error assertion
    broad_raises: re.Pattern[str]    # one that accepts any error
    indented: bool                   # blocks by indentation (Python) or braces


def judge_hunks(item: ChangedFile, rules: HunkRules, test_file: bool, elsewhere: set[str],
                read: tuple[set[int], set[int]] = (set(), set())) -> list[Found]:
    """Findings from ``item``'s hunks; ``elsewhere``: test names the rest of the change
    defines; ``read``: old and new lines already judged by meaning (:mod:`.fragments`)."""
    found: list[Found] = []
    path = item.path
    for hunk in item.hunks:
        removed = [(number, text) for number, text in hunk.removed() if number not in read[0]]
        added = [(number, text) for number, text in hunk.added() if number not in read[1]]
        if test_file:
            found.extend(_tests(path, item.old_path or path, removed, added, rules, elsewhere))
        found.extend(_swallowed(path, added, rules))
    return found


def _tests(path: str, old_path: str, removed: list[tuple[int, str]], added: list[tuple[int, str]],
           rules: HunkRules, elsewhere: set[str]) -> list[Found]:
    found: list[Found] = []
    gone = {m[1]: number for number, text in removed for m in [rules.test.search(text)] if m}
    new = {m[1]: number for number, text in added for m in [rules.test.search(text)] if m}
    renamed = [name for name in new if name not in gone]
    for name, number in gone.items():
        if name in new or name in elsewhere:
            continue
        if renamed:  # a definition line swapped for another: a rename we cannot check further
            renamed.pop(0)
            continue
        found.append((GuardClass.DELETED_TEST, old_path, number, f"test {name} was removed (seen in the patch only)"))
    brand_new = set(renamed)
    for index, (number, text) in enumerate(added):
        if rules.skip.search(text) and not _decorates_new(added[index + 1:], rules, brand_new):
            found.append((GuardClass.SKIPPED_TEST, path, number,
                          f"skip marker added: `{text.strip()}` (seen in the patch only)"))
        elif rules.only is not None and rules.only.search(text):
            found.append((GuardClass.SKIPPED_TEST, path, number,
                          f"`{text.strip()}` makes the runner skip every other test (seen in the patch only)"))
        elif rules.empty.search(text):
            found.append((GuardClass.LOOSENED_ASSERTION, path, number,
                          f"`{text.strip()}` asserts nothing (seen in the patch only)"))
        elif rules.broad_raises.search(text) and any(rules.raises.search(old) for _n, old in removed):
            found.append((GuardClass.LOOSENED_ASSERTION, path, number,
                          f"the expected error is widened: `{text.strip()}` (seen in the patch only)"))
    strong = sum(bool(rules.strong.search(text)) for _n, text in removed) - \
        sum(bool(rules.strong.search(text)) for _n, text in added)
    weak = sum(bool(rules.weak.search(text)) for _n, text in added) - \
        sum(bool(rules.weak.search(text)) for _n, text in removed)
    if strong > 0 and not gone:
        line = added[0][0] if added else removed[0][0]
        what = "replaced by weaker ones" if weak > 0 else "removed"
        example = next(text.strip() for _n, text in removed if rules.strong.search(text))
        found.append((GuardClass.LOOSENED_ASSERTION, path, line, f"{strong} equality assertion(s) {what}, "
                      f"e.g. `{example}` (seen in the patch only)"))
    return found


def _decorates_new(rest: list[tuple[int, str]], rules: HunkRules, brand_new: set[str]) -> bool:
    """A marker right above a test the patch adds: a new test may be born skipped."""
    for _number, text in rest[:4]:
        match = rules.test.search(text)
        if match:
            return match[1] in brand_new
    return False


def _swallowed(path: str, added: list[tuple[int, str]], rules: HunkRules) -> list[Found]:
    found: list[Found] = []
    for index, (number, text) in enumerate(added):
        if rules.swallow.search(text):
            found.append((GuardClass.SWALLOWED_ERROR, path, number,
                          f"`{text.strip()}` discards the error (seen in the patch only)"))
            continue
        if not rules.handler_head.search(text):
            continue
        body = _block(added[index + 1:], number, text, rules)
        if any(rules.rethrow.search(line) for line in body):
            continue
        if (body and all(rules.discard_body.search(line) for line in body)) or (
                rules.broad_head.search(text) and all(rules.quiet_body.search(line) for line in body)):
            shown = " ".join(part.strip() for part in [text, *body])[:120]
            found.append((GuardClass.SWALLOWED_ERROR, path, number,
                          f"`{shown}` discards the error (seen in the patch only)"))
    return found


def _block(rest: list[tuple[int, str]], number: int, head: str, rules: HunkRules) -> list[str]:
    """The added lines right after a handler's head that form its body."""
    indent = len(head) - len(head.lstrip())
    body: list[str] = []
    for expected, (line_number, text) in enumerate(rest, start=number + 1):
        if line_number != expected or not text.strip():
            break
        if rules.indented and len(text) - len(text.lstrip()) <= indent:
            break
        body.append(text)
        if not rules.indented and text.strip().startswith("}"):
            break
    return body


PYTHON = HunkRules(
    test=re.compile(r"^\s*(?:async\s+)?def\s+(test\w*)\s*\("),
    skip=re.compile(r"^\s*@(?:pytest\.)?mark\.(?:skip|skipif|xfail)\b|^\s*@(?:unittest\.)?(?:skip|skipIf|skipUnless"
                    r"|expectedFailure)\b|\b(?:pytest\.skip|pytest\.xfail|self\.skipTest)\(|^\s*pytestmark\s*="),
    only=None,
    strong=re.compile(r"^\s*assert\b.*(?:==|\bis\b)|\.assert(?:Equal|Is|IsNone|CountEqual|AlmostEqual)\w*\("),
    weak=re.compile(r"^\s*assert\s+(?!.*(?:==|!=|<|>|\bin\b|\bis\b))|\.assert(?:True|False|IsNotNone|IsInstance)\("),
    empty=re.compile(r"^\s*assert\s+(?:True|1|not\s+False)\s*(?:,.*)?$|\.assertTrue\(\s*True\s*\)"),
    swallow=re.compile(r"^\s*except\b[^:]*:\s*(?:pass|\.\.\.|continue)\s*(?:#.*)?$|\bsuppress\("),
    handler_head=re.compile(r"^\s*except\b[^:]*:\s*(?:#.*)?$"),
    discard_body=re.compile(r"^\s*(?:pass|\.\.\.)\s*(?:#.*)?$"),
    quiet_body=re.compile(r"^\s*(?:pass|\.\.\.|continue|break|return(?:\s+(?:None|-?\d[\d.]*|'[^']*'|\"[^\"]*\"|True"
                          r"|False|\[\]|\{\}))?|(?:log|logger|logging|warnings)\.\w+\(.*|print\(.*)\s*(?:#.*)?$"),
    broad_head=re.compile(r"^\s*except\s*(?:\(?\s*(?:Base)?Exception\b[^:]*|\(?\s*AssertionError\b[^:]*)?:"),
    rethrow=re.compile(r"^\s*raise\b"),
    raises=re.compile(r"\b(?:pytest\.)?raises\(|\.assertRaises"),
    broad_raises=re.compile(r"\b(?:raises|assertRaises)\(\s*(?:Base)?Exception\b"),
    indented=True,
)

JAVASCRIPT = HunkRules(
    test=re.compile(r"^\s*[xf]?(?:it|test|specify)(?:\.\w+)*\s*\(\s*['\"`](.+?)['\"`]"),
    skip=re.compile(r"\b(?:it|test|describe|suite|specify)\.(?:skip|todo|failing)\b|\b(?:xit|xtest|xdescribe)\s*\("),
    only=re.compile(r"\b(?:it|test|describe|suite)\.only\b|\b(?:fit|fdescribe)\s*\("),
    strong=re.compile(r"\.(?:toBe|toEqual|toStrictEqual|toBeNull|toBeCloseTo|toThrow\w*)\(\s*\S|"
                      r"\bassert\.(?:strictEqual|deepStrictEqual|equal|deepEqual)\("),
    weak=re.compile(r"\.(?:toBeTruthy|toBeDefined|toBeFalsy)\(|\.not\.(?:toBeNull|toBeUndefined)\(|"
                    r"\bassert(?:\.ok)?\("),
    empty=re.compile(r"\bexpect\(\s*(?:true|1|['\"][^'\"]*['\"])\s*\)\.(?:toBe\(\s*(?:true|1)\s*\)|toBeTruthy\(\))"),
    swallow=re.compile(r"\bcatch\s*(?:\([^)]*\))?\s*\{\s*\}|\.catch\(\s*(?:\(\s*\w*\s*\)|\w+)\s*=>\s*"
                       r"(?:\{\s*\}|null|undefined)\s*\)"),
    handler_head=re.compile(r"\bcatch\s*(?:\([^)]*\))?\s*\{\s*$"),
    discard_body=re.compile(r"^\s*(?:\}.*|//.*)\s*$"),
    quiet_body=re.compile(r"^\s*(?:\}.*|//.*|return(?:\s+(?:null|undefined|-?\d[\d.]*|'[^']*'|\"[^\"]*\"|true|false))?"
                          r"\s*;?|console\.\w+\(.*\);?)\s*$"),
    broad_head=re.compile(r"\bcatch\b"),
    rethrow=re.compile(r"\bthrow\b"),
    raises=re.compile(r"\.toThrow\w*\(|\bassert\.throws\("),
    broad_raises=re.compile(r"\.toThrow\(\s*\)"),
    indented=False,
)
