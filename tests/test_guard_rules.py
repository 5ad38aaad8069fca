"""Single rules of the built-in guards, beyond the corpus: each row is an old and a new
version of one file, judged by the real plugin loaded through its entry point."""

from __future__ import annotations

import pytest

from axpipe.change.from_git import hunks_between
from axpipe.interfaces import ChangedFile, ChangeSet, Guard, GuardContext
from axpipe.plugin import registry

PY_TEST = "tests/test_x.py"
JS_TEST = "src/x.test.js"


def judge(path: str, before: str | None, after: str | None, context: GuardContext | None = None) -> list[str]:
    """The classes the right built-in guard reports for one file changing from before to after."""
    guard = registry.load("axpipe.guards", "python" if path.endswith(".py") else "javascript")
    assert isinstance(guard, Guard)
    item = ChangedFile(path if before is not None else None, path if after is not None else None, before, after,
                       hunks_between(before or "", after or ""))
    findings = guard.check(ChangeSet([item], "test"), context or GuardContext())
    return sorted(finding.guard for finding in findings)


def py_test(body: str, header: str = "import math\n\nimport numpy as np\nimport pytest\n\n\n") -> str:
    return header + "def test_x():\n" + "".join(f"    {line}\n" for line in body.splitlines())


@pytest.mark.parametrize(("before", "after", "expected"), [
    pytest.param("assert math.isclose(f(), 1.0)", "assert math.isclose(f(), 1.0, rel_tol=0.2)",
                 ["loosened-assertion"], id="isclose-widened"),
    pytest.param("np.testing.assert_allclose(f(), [1.0], rtol=1e-7)",
                 "np.testing.assert_allclose(f(), [1.0], rtol=0.1)", ["loosened-assertion"], id="allclose-widened"),
    pytest.param("assert abs(f() - 1.0) < 1e-9", "assert abs(f() - 1.0) < 0.5",
                 ["loosened-assertion"], id="abs-difference-widened"),
    pytest.param("assert f() is None", "assert f() is not None", ["loosened-assertion"], id="is-none-to-not-none"),
    pytest.param("assert f() == 3", "assert f() in (3, 4)", ["loosened-assertion"], id="equality-to-membership"),
    pytest.param("m.assert_called_once_with(1)", "m.assert_called()", ["loosened-assertion"], id="mock-assertion"),
    pytest.param("assert f() == 3", "assert not False", ["loosened-assertion"], id="not-false"),
    pytest.param("assert f() == 3\nassert g() == 4", "assert f() == 3 and g() == 4", [], id="and-split"),
    pytest.param("assert f() == 3", "assert f() == 3, 'message'", [], id="message-added"),
    pytest.param("assert f()", "assert f() == 3", [], id="truthiness-to-equality"),
    pytest.param("assert math.isclose(f(), 1.0, rel_tol=0.1)", "assert math.isclose(f(), 1.0)", [], id="narrowed"),
    pytest.param("with pytest.raises(ValueError):\n    f()", "with pytest.raises((ValueError, TypeError)):\n    f()",
                 ["loosened-assertion"], id="raises-tuple-widened"),
    pytest.param("assert f() == 3", "pytest.importorskip('numpy')\nassert f() == 3", ["skipped-test"],
                 id="importorskip-added"),
    pytest.param("assert f() == 3", "raise unittest.SkipTest('later')\nassert f() == 3", ["skipped-test"],
                 id="raise-skiptest"),
])
def test_python_assertion_rules(before: str, after: str, expected: list[str]) -> None:
    assert judge(PY_TEST, py_test(before), py_test(after)) == expected


@pytest.mark.parametrize(("before", "after", "expected"), [
    pytest.param("def f(x):\n    return x * 2\n",
                 "def f(x):\n    try:\n        return x * 2\n    except Exception as error:\n"
                 "        raise RuntimeError('f failed') from error\n", [], id="wrap-and-raise"),
    pytest.param("def f(x):\n    return x * 2\n",
                 "def f(x):\n    try:\n        return x * 2\n    except (TypeError, Exception):\n        return None\n",
                 ["swallowed-error"], id="tuple-with-exception"),
    pytest.param("def f(x):\n    return x * 2\n",
                 "def f(x):\n    try:\n        return x * 2\n    except TypeError:\n        print('bad x')\n",
                 [], id="narrow-print-is-handling"),
    pytest.param("def f(x):\n    return x * 2\n",
                 "def f(x):\n    try:\n        return x * 2\n    except Exception:\n        print('bad x')\n",
                 ["swallowed-error"], id="broad-print-only"),
    pytest.param("def f(x):\n    return x * 2\n",
                 "def f(x):\n    try:\n        return x * 2\n    except Exception as error:\n"
                 "        return describe(error)\n", [], id="broad-returning-a-computed-result"),
    pytest.param("def f(x):\n    return x * 2\n",
                 "def f(x):\n    try:\n        return x * 2\n    except:\n        return describe()\n",
                 ["swallowed-error"], id="bare-except"),
    pytest.param("def f(paths):\n    return [open(p).read() for p in paths]\n",
                 "def f(paths):\n    out = []\n    for p in paths:\n        try:\n"
                 "            out.append(open(p).read())\n        except OSError:\n            continue\n"
                 "    return out\n", [], id="narrow-continue"),
    pytest.param("def f(x):\n    return x * 2\n",
                 "from contextlib import suppress\n\n\ndef f(x):\n    with suppress(TypeError):\n"
                 "        return x * 2\n", ["swallowed-error"], id="suppress-imported"),
    pytest.param("def f(x):\n    try:\n        return x * 2\n    except TypeError:\n        raise\n",
                 "def f(x):\n    try:\n        return x * 2\n    except TypeError:\n        pass\n",
                 ["swallowed-error"], id="reraise-becomes-pass"),
    pytest.param("def f(x):\n    try:\n        return x * 2\n    except TypeError:\n        pass\n",
                 "def g():\n    pass\n\n\ndef f(x):\n    try:\n        return x * 2\n    except TypeError:\n"
                 "        pass\n", [], id="existing-handler-moved-down"),
    pytest.param("def scale(x):\n    return x * 2\n",
                 "def scale(x):\n    if x > 100:\n        return 100\n    return x * 2\n", [],
                 id="cap-is-not-hardcoding"),
    pytest.param("def label(code):\n    if code == 'a':\n        return 'Alpha'\n    return 'Unknown'\n",
                 "def label(code):\n    if code == 'a':\n        return 'Alpha'\n    if code == 'b':\n"
                 "        return 'Beta'\n    return 'Unknown'\n", [], id="lookup-table-case"),
])
def test_python_code_rules(before: str, after: str, expected: list[str]) -> None:
    assert judge("lib/code.py", before, after) == expected


def js_test(body: str) -> str:
    return "describe('x', () => {\n  it('works', () => {\n" + "".join(f"    {line}\n" for line in body.splitlines()) \
        + "  });\n});\n"


@pytest.mark.parametrize(("before", "after", "expected"), [
    pytest.param("expect.assertions(2);\nexpect(f()).toBe(1);\nexpect(g()).toBe(2);",
                 "expect.assertions(1);\nexpect(f()).toBe(1);\nexpect(g()).toBe(2);",
                 ["loosened-assertion"], id="declared-assertions-lowered"),
    pytest.param("expect(f()).to.equal(3);", "expect(f()).to.be.ok;", ["loosened-assertion"], id="chai-equal-to-ok"),
    pytest.param("expect(f()).to.be.closeTo(1, 0.01);", "expect(f()).to.be.closeTo(1, 0.5);",
                 ["loosened-assertion"], id="chai-closeto-delta"),
    pytest.param("expect(f()).toBeNull();", "expect(f()).not.toBeUndefined();", ["loosened-assertion"],
                 id="null-to-not-undefined"),
    pytest.param("await expect(load()).rejects.toThrow('boom');", "await expect(load()).rejects.toThrow();",
                 ["loosened-assertion"], id="rejects-message-dropped"),
    pytest.param("expect(f()).toBeTruthy();", "expect(f()).toBe(3);", [], id="stricter"),
    pytest.param("expect(f()).toBe(3);", "// a comment with it('x') and expect(\nexpect(f()).toBe(3);", [],
                 id="comment-mentions-tests"),
    pytest.param("expect(f(`a ${'b'} c`)).toBe(`x`);", "expect(f(`a ${'b'} c`)).toBe(`x`);\n"
                 "expect(/it\\('/.test('x')).toBe(false);", [], id="template-and-regex-literals"),
])
def test_javascript_assertion_rules(before: str, after: str, expected: list[str]) -> None:
    assert judge(JS_TEST, js_test(before), js_test(after)) == expected


@pytest.mark.parametrize(("before", "after", "expected"), [
    pytest.param("export function f(p) {\n  return load(p);\n}\n",
                 "export function f(p) {\n  return load(p).catch(noop);\n}\n", ["swallowed-error"], id="catch-noop"),
    pytest.param("export function f(p) {\n  return load(p);\n}\n",
                 "export function f(p) {\n  return load(p).catch(console.error);\n}\n", ["swallowed-error"],
                 id="catch-console"),
    pytest.param("export function f(p) {\n  return load(p);\n}\n",
                 "export function f(p) {\n  return load(p).catch((e) => { throw new Wrapped(e); });\n}\n", [],
                 id="catch-rethrow"),
    pytest.param("export function f(p) {\n  return load(p);\n}\n",
                 "export function f(p) {\n  return new Promise((resolve, reject) => load(p).then(resolve)"
                 ".catch((e) => reject(e)));\n}\n", [], id="catch-rejects"),
    pytest.param("class Cart {\n  total(items) {\n    return sum(items);\n  }\n}\n",
                 "class Cart {\n  total(items) {\n    try {\n      return sum(items);\n    } catch {\n    }\n  }\n}\n",
                 ["swallowed-error"], id="method-empty-catch"),
])
def test_javascript_code_rules(before: str, after: str, expected: list[str]) -> None:
    assert judge("src/x.js", before, after) == expected


def test_a_new_skipped_test_is_not_a_cheat_but_only_is() -> None:
    before = js_test("expect(f()).toBe(1);")
    assert judge(JS_TEST, before, before + "it.skip('later', () => {\n  expect(g()).toBe(2);\n});\n") == []
    assert judge(JS_TEST, before, before + "it.only('new', () => {\n  expect(g()).toBe(2);\n});\n") == [
        "skipped-test"]


def test_a_deleted_test_file_is_one_finding_listing_its_tests() -> None:
    guard = registry.load("axpipe.guards", "python")
    text = "def test_a():\n    assert a() == 1\n\n\ndef test_b():\n    assert b() == 2\n"
    item = ChangedFile(PY_TEST, None, text, None, hunks_between(text, ""))
    finding, = guard.check(ChangeSet([item], "test"), GuardContext())
    assert (finding.guard, finding.file, finding.line) == ("deleted-test", PY_TEST, 1)
    assert finding.evidence == "test file deleted with 2 test(s) found nowhere else in the change: test_a, test_b"


@pytest.mark.parametrize(("output", "expected"), [
    pytest.param("E       AssertionError: assert 41 == 42\nE        +  where 41 = f(40)\n", ["hardcoded-expected"],
                 id="pytest-where"),
    pytest.param("AssertionError: 41 != 42\n", ["hardcoded-expected"], id="unittest"),
    pytest.param("Expected: 42\nReceived: 41\n", ["hardcoded-expected"], id="jest"),
    pytest.param("AssertionError: expected 41 to be 42 // Object.is equality\n", ["hardcoded-expected"], id="vitest"),
    pytest.param("  expected: 42\n  actual: 41\n", ["hardcoded-expected"], id="node-test"),
    pytest.param("INFO computed 42 widgets\n", [], id="log-lines-are-not-assertions"),
])
def test_failure_outputs_of_each_runner(output: str, expected: list[str]) -> None:
    before, after = "def f(n):\n    return n + 1\n", "def f(n):\n    return 42\n"
    assert judge("lib/f.py", before, after, GuardContext(failure_output=output)) == expected
