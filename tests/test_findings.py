"""Reading lint and type-check findings from the output formats tools really print."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from axpipe.gate import findings, junit
from axpipe.gate.findings import Finding

RUFF_FULL = """\
F401 [*] `os` imported but unused
 --> src/a.py:1:8
  |
1 | import os
  |        ^^
  |
help: Remove unused import: `os`

Found 1 error.
"""

ESLINT_STYLISH = """
/work/app/src/main.js
  3:7   error    'x' is assigned a value but never used  no-unused-vars
  9:1   warning  Unexpected console statement            no-console

✖ 2 problems (1 error, 1 warning)
"""


@pytest.mark.parametrize("output, expected", [
    pytest.param("src/a.py:1:8: F401 [*] `os` imported but unused\nFound 1 error.\n",
                 [Finding("src/a.py", 1, 8, "`os` imported but unused", "F401", None)], id="ruff-concise"),
    pytest.param(RUFF_FULL, [Finding("src/a.py", 1, 8, "`os` imported but unused", "F401", None)], id="ruff-full"),
    pytest.param("./src/a.py:12:80: E501 line too long (99 > 79 characters)\n",
                 [Finding("src/a.py", 12, 80, "line too long (99 > 79 characters)", "E501", None)], id="flake8"),
    pytest.param('b.py:2: error: Incompatible return value type (got "int", expected "str")  [return-value]\n'
                 'b.py:4: note: Revealed type is "int"\nFound 1 error in 1 file (checked 1 source file)\n',
                 [Finding("b.py", 2, None, 'Incompatible return value type (got "int", expected "str")',
                          "return-value", "error"),
                  Finding("b.py", 4, None, 'Revealed type is "int"', None, "note")], id="mypy"),
    pytest.param("src/app.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n",
                 [Finding("src/app.ts", 3, 7, "Type 'string' is not assignable to type 'number'.", "TS2322",
                          "error")], id="tsc"),
    pytest.param("/work/app/src/main.js:3:7: 'x' is assigned a value but never used. [Error/no-unused-vars]\n",
                 [Finding("src/main.js", 3, 7, "'x' is assigned a value but never used. [Error/no-unused-vars]",
                          None, None)], id="eslint-unix"),
    pytest.param(ESLINT_STYLISH, [Finding("src/main.js", 3, 7, "'x' is assigned a value but never used",
                                          "no-unused-vars", "error"),
                                  Finding("src/main.js", 9, 1, "Unexpected console statement", "no-console",
                                          "warning")], id="eslint-stylish"),
    pytest.param("app/(auth)/page.py:1:8: F401 [*] `sys` imported but unused\n",
                 [Finding("app/(auth)/page.py", 1, 8, "`sys` imported but unused", "F401", None)],
                 id="parentheses-in-a-path"),
    pytest.param("data/a:b/x.py:3: error: Name \"f\" is not defined  [name-defined]\n",
                 [Finding("data/a:b/x.py", 3, None, 'Name "f" is not defined', "name-defined", "error")],
                 id="a-colon-in-a-path"),
    pytest.param("app/(auth)/page.tsx(3,7): error TS2322: Type 'a.py:3:' is wrong.\n",
                 [Finding("app/(auth)/page.tsx", 3, 7, "Type 'a.py:3:' is wrong.", "TS2322", "error")],
                 id="tsc-parentheses-in-a-path"),
    pytest.param("All checks passed!\n", [], id="clean"),
    pytest.param("Traceback (most recent call last):\n  File \"x\", line 3\nKeyError: 'a'\n", [], id="a-crash"),
])
def test_text_formats(output: str, expected: list[Finding]) -> None:
    assert findings.parse(output, Path("/work/app")) == expected


def test_a_line_that_looks_like_a_place_but_reads_as_no_finding_is_kept() -> None:
    output = "a.py:1:8: F401 `os` imported but unused\n    b.py:3: indented, so not a finding\nFound 2 errors.\n"
    parsed = findings.read(output, Path("/x"))
    assert parsed.found == [Finding("a.py", 1, 8, "`os` imported but unused", "F401", None)]
    assert parsed.unread == ["b.py:3: indented, so not a finding"]


def test_ruff_json_even_after_a_warning_line() -> None:
    document = [{"filename": "/work/app/src/a.py", "location": {"row": 1, "column": 8}, "code": "F401",
                 "message": "`os` imported but unused"}]
    output = "warning: `ruff` is old\n" + json.dumps(document, indent=2)
    assert findings.parse(output, Path("/work/app")) == [
        Finding("src/a.py", 1, 8, "`os` imported but unused", "F401", "error")]


def test_eslint_and_flake8_json() -> None:
    eslint = [{"filePath": "/work/app/a.js", "messages": [
        {"line": 2, "column": 1, "message": "no", "ruleId": "no-var", "severity": 2},
        {"line": 5, "column": 3, "message": "hm", "ruleId": "no-console", "severity": 1}]}]
    assert [(f.path, f.line, f.code, f.severity) for f in findings.parse(json.dumps(eslint), Path("/work/app"))] == [
        ("a.js", 2, "no-var", "error"), ("a.js", 5, "no-console", "warning")]
    flake8 = {"./a.py": [{"code": "E302", "line_number": 4, "column_number": 1, "text": "expected 2 blank lines"}]}
    assert findings.parse(json.dumps(flake8), Path("/x")) == [
        Finding("a.py", 4, 1, "expected 2 blank lines", "E302", "error")]


def test_mypy_json_lines() -> None:
    lines = "\n".join(json.dumps({"file": "b.py", "line": line, "column": 3, "message": message, "code": code,
                                  "severity": severity})
                      for line, message, code, severity in [(2, "bad", "return-value", "error"),
                                                            (4, "shown", "misc", "note")])
    parsed = findings.parse(lines, Path("/x"))
    assert [(f.line, f.code, f.counts) for f in parsed] == [(2, "return-value", True), (4, "misc", False)]


def test_real_ruff_output_in_each_format(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import os\nx = 1\n")
    for fmt in ("full", "concise", "json"):
        output = subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--select", "F401",
                                 "--output-format", fmt, "."],
                                cwd=tmp_path, capture_output=True, text=True).stdout
        parsed = findings.parse(output, tmp_path)
        assert [(f.path, f.line, f.column, f.code) for f in parsed] == [("a.py", 1, 8, "F401")], fmt


def test_junit_identities_statuses_and_reruns(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    report.write_text("""<?xml version="1.0"?>
<testsuites><testsuite name="s">
  <testcase classname="tests.test_a" name="test_ok"/>
  <testcase classname="tests.test_a" name="test_bad"><failure message="assert 1 == 2&#10;more">x</failure></testcase>
  <testcase classname="tests.test_a" name="test_err"><error>ImportError: no</error></testcase>
  <testcase classname="" name="lonely"><skipped message="later"/></testcase>
  <testcase classname="tests.test_a" name="test_flaky"/>
  <testcase classname="tests.test_a" name="test_flaky"><failure message="flaked"/></testcase>
</testsuite></testsuites>""")
    cases = junit.read(report)
    assert {case.id: case.status for case in cases.values()} == {
        "tests.test_a::test_ok": "passed", "tests.test_a::test_bad": "failed", "tests.test_a::test_err": "failed",
        "lonely": "skipped", "tests.test_a::test_flaky": "failed"}
    assert cases["tests.test_a::test_bad"].message == "assert 1 == 2"
    assert cases["tests.test_a::test_err"].message == "ImportError: no"
    assert [case.id for case in junit.failing(cases)] == [
        "tests.test_a::test_bad", "tests.test_a::test_err", "tests.test_a::test_flaky"]


@pytest.mark.parametrize("content, message", [
    (None, "no JUnit XML at"), ("", "is empty"), ("<html></html>", "its root element is <html>"),
    ("<testsuites", "is not XML"),
])
def test_junit_problems_are_named(tmp_path: Path, content: str | None, message: str) -> None:
    report = tmp_path / "junit.xml"
    if content is not None:
        report.write_text(content)
    with pytest.raises(junit.JUnitError, match=message):
        junit.read(report)


def test_junit_says_how_a_test_failed(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    report.write_text("""<?xml version="1.0"?>
<testsuite name="s">
  <testcase classname="t" name="vitest"><failure message="expected 41 to be 42" type="AssertionError"/></testcase>
  <testcase classname="t" name="pytest"><failure message="assert 41 == 42">def test():
&gt;       assert f() == 42

tests/test_a.py:7: AssertionError</failure></testcase>
  <testcase classname="t" name="setup"><error message="failed on setup with &quot;fixture 'db' not found&quot;">
file /x/tests/test_a.py, line 3</error></testcase>
</testsuite>""")
    cases = junit.read(report)
    assert {name: case.kind for name, case in cases.items()} == {
        "t::vitest": "failure AssertionError", "t::pytest": "failure AssertionError", "t::setup": "error"}


@pytest.mark.parametrize("output, syntax", [
    ("a.py:7:1: invalid-syntax: Expected an indented block after function definition\n", True),
    ("a.py:7:1: E999 IndentationError: expected an indented block\n", True),
    ("a.py:7: error: Invalid syntax  [syntax]\n", True),
    ("a.py:7:1: F401 `os` imported but unused\n", False),
    ("a.py:7: error: Name \"x\" is not defined  [name-defined]\n", False),
])
def test_syntax_errors_are_recognised(output: str, syntax: bool) -> None:
    assert [finding.syntax for finding in findings.parse(output, Path("/x"))] == [syntax]
