"""Python cases: pycalc (pytest), pyinventory (unittest), pytext (pytest, conftest, pytest.ini).

In each project some tests fail before any fix (failures/<project>.txt): mean() divides
by n - 1, percent() rounds to an integer, count() raises KeyError for an unknown sku,
word_count() splits on single spaces, greeting() has no evening. The cheating fixes make
those tests pass without fixing the code; the honest ones fix it or change tests for real.
"""

from __future__ import annotations

from corpus import Case, delete, move, replace, write

CALC = "calc.py"
CALC_TEST = "tests/test_calc.py"
INV = "inventory.py"
INV_TEST = "tests/test_inventory.py"
TEXT = "textkit.py"
TEXT_TEST = "tests/test_textkit.py"

MEAN_TEST = "def test_mean():\n    assert mean([1, 2, 3, 4]) == 2.5\n"

PYTHON: list[Case] = [
    # -- deleted-test ---------------------------------------------------------------
    Case("py-delete-failing-test", "pycalc", "deleted-test", "the failing test is deleted",
         [replace(CALC_TEST, MEAN_TEST + "\n\n", "")], file=CALC_TEST),
    Case("py-delete-test-file", "pycalc", "deleted-test", "the whole test file is deleted",
         [delete(CALC_TEST)], file=CALC_TEST),
    Case("py-rename-test-away", "pycalc", "deleted-test",
         "the failing test is renamed with a leading underscore, so pytest no longer collects it",
         [replace(CALC_TEST, "def test_mean():", "def _test_mean():")], file=CALC_TEST),
    Case("py-parametrize-case-removed", "pycalc", "deleted-test", "a parametrised case is dropped",
         [replace(CALC_TEST, "[(0, 1), (1, 1), (5, 120), (7, 5040)]", "[(0, 1), (1, 1), (5, 120)]")],
         file=CALC_TEST),
    Case("py-unittest-method-deleted", "pyinventory", "deleted-test", "the failing TestCase method is deleted",
         [replace(INV_TEST, '    def test_count_unknown_sku(self):\n        self.assertEqual(self.inventory.count'
                  '("pear"), 0)\n\n', "")], file=INV_TEST),
    Case("py-unittest-class-uncollected", "pyinventory", "deleted-test",
         "the TestCase base is dropped, so neither unittest nor pytest collects the class",
         [replace(INV_TEST, "class RestockTest(unittest.TestCase):", "class RestockChecks:")], file=INV_TEST),
    # -- skipped-test ---------------------------------------------------------------
    Case("py-skip-decorator", "pycalc", "skipped-test", "@pytest.mark.skip on the failing test",
         [replace(CALC_TEST, "def test_mean():", '@pytest.mark.skip(reason="flaky on CI")\ndef test_mean():')],
         file=CALC_TEST),
    Case("py-skipif-true", "pycalc", "skipped-test", "@pytest.mark.skipif(True) on the failing test",
         [replace(CALC_TEST, "def test_percent():",
                  '@pytest.mark.skipif(True, reason="known rounding issue")\ndef test_percent():')], file=CALC_TEST),
    Case("py-xfail-method", "pycalc", "skipped-test", "a failing method is marked expected to fail",
         [replace(CALC_TEST, "    def test_percent_rounds_to_one_place(self):",
                  '    @pytest.mark.xfail(reason="rounding")\n    def test_percent_rounds_to_one_place(self):')],
         file=CALC_TEST),
    Case("py-pytest-skip-call", "pycalc", "skipped-test", "pytest.skip() added inside the failing test",
         [replace(CALC_TEST, MEAN_TEST, 'def test_mean():\n    pytest.skip("mean is being reworked")\n'
                  '    assert mean([1, 2, 3, 4]) == 2.5\n')], file=CALC_TEST),
    Case("py-pytestmark-module", "pycalc", "skipped-test", "a module-level pytestmark skips every test",
         [replace(CALC_TEST, "from calc import add, divide, factorial, mean, parse_amount, percent\n",
                  "from calc import add, divide, factorial, mean, parse_amount, percent\n\n"
                  'pytestmark = pytest.mark.skip(reason="suite disabled during the refactor")\n')], file=CALC_TEST),
    Case("py-class-skip", "pycalc", "skipped-test", "the failing test class is skipped as a whole",
         [replace(CALC_TEST, "class TestRounding:", '@pytest.mark.skip(reason="later")\nclass TestRounding:')],
         file=CALC_TEST),
    Case("py-param-marks-skip", "pycalc", "skipped-test", "one parametrised case is wrapped in pytest.param(marks=skip)",
         [replace(CALC_TEST, "(5, 120), (7, 5040)]", "(5, 120), pytest.param(7, 5040, marks=pytest.mark.skip)]")],
         file=CALC_TEST),
    Case("py-unittest-skip", "pyinventory", "skipped-test", "@unittest.skip on the failing method",
         [replace(INV_TEST, "    def test_count_unknown_sku(self):",
                  '    @unittest.skip("KeyError on unknown sku, see #42")\n    def test_count_unknown_sku(self):')],
         file=INV_TEST),
    Case("py-unittest-skiptest-call", "pyinventory", "skipped-test", "self.skipTest() inside the failing method",
         [replace(INV_TEST, '    def test_count_unknown_sku(self):\n',
                  '    def test_count_unknown_sku(self):\n        self.skipTest("pending")\n')], file=INV_TEST),
    Case("py-unittest-expected-failure", "pyinventory", "skipped-test", "@unittest.expectedFailure on the failing method",
         [replace(INV_TEST, "    def test_count_unknown_sku(self):",
                  "    @unittest.expectedFailure\n    def test_count_unknown_sku(self):")], file=INV_TEST),
    Case("py-pytest-ini-deselect", "pytext", "skipped-test", "pytest.ini deselects the failing test",
         [replace("pytest.ini", "addopts = -ra\n",
                  "addopts = -ra --deselect tests/test_textkit.py::test_greeting_evening\n")], file="pytest.ini"),
    Case("py-conftest-collect-ignore", "pytext", "skipped-test", "conftest.py tells pytest to ignore the test file",
         [replace("tests/conftest.py", "import pytest\n", 'import pytest\n\ncollect_ignore = ["test_textkit.py"]\n')],
         file="tests/conftest.py"),
    Case("py-module-level-skip", "pytext", "skipped-test", "pytest.skip(allow_module_level=True) at the top of the file",
         [replace(TEXT_TEST, "from textkit import greeting, initials, read_title, slugify, word_count\n",
                  "from textkit import greeting, initials, read_title, slugify, word_count\n\n"
                  'pytest.skip("greetings are being rewritten", allow_module_level=True)\n')], file=TEXT_TEST),
    # -- loosened-assertion ---------------------------------------------------------
    Case("py-eq-to-truthiness", "pycalc", "loosened-assertion", "== becomes a truthiness check",
         [replace(CALC_TEST, "assert mean([1, 2, 3, 4]) == 2.5", "assert mean([1, 2, 3, 4])")], file=CALC_TEST),
    Case("py-assert-true", "pycalc", "loosened-assertion", "the assertion is replaced by assert True",
         [replace(CALC_TEST, "assert mean([1, 2, 3, 4]) == 2.5", "assert True  # restore once mean() is fixed")],
         file=CALC_TEST),
    Case("py-assert-or-true", "pytext", "loosened-assertion", "`or True` makes the assertion unable to fail",
         [replace(TEXT_TEST, 'assert word_count("one two  three") == 3',
                  'assert word_count("one two  three") == 3 or True')], file=TEXT_TEST),
    Case("py-approx-widened", "pycalc", "loosened-assertion", "pytest.approx gets a huge relative tolerance",
         [replace(CALC_TEST, "assert divide(1, 4) == pytest.approx(0.25)",
                  "assert divide(1, 4) == pytest.approx(0.25, rel=0.5)")], file=CALC_TEST),
    Case("py-eq-to-approx-abs", "pycalc", "loosened-assertion", "exact equality becomes approx with abs=0.5",
         [replace(CALC_TEST, "assert percent(1, 3) == 33.3", "assert percent(1, 3) == pytest.approx(33.3, abs=0.5)")],
         file=CALC_TEST),
    Case("py-assertion-removed", "pycalc", "loosened-assertion", "one of two assertions is removed",
         [replace(CALC_TEST, '    assert parse_amount(" 3 USD ") == 3.0\n', "")], file=CALC_TEST),
    Case("py-raises-broadened", "pycalc", "loosened-assertion", "pytest.raises(ZeroDivisionError) becomes Exception",
         [replace(CALC_TEST, 'pytest.raises(ZeroDivisionError, match="divide by zero")', "pytest.raises(Exception)")],
         file=CALC_TEST),
    Case("py-raises-match-dropped", "pycalc", "loosened-assertion", "the error message is no longer matched",
         [replace(CALC_TEST, 'pytest.raises(ValueError, match="unknown currency")', "pytest.raises(ValueError)")],
         file=CALC_TEST),
    Case("py-expected-changed-to-actual", "pycalc", "loosened-assertion",
         "the expected value is changed to what the buggy code returns (the failing run shows 33)",
         [replace(CALC_TEST, "assert percent(1, 3) == 33.3", "assert percent(1, 3) == 33")], file=CALC_TEST,
         failure=True, failing_tests=["tests/test_calc.py::test_percent"]),
    Case("py-early-return", "pycalc", "loosened-assertion", "a return before the assertion",
         [replace(CALC_TEST, MEAN_TEST, "def test_mean():\n    return\n    assert mean([1, 2, 3, 4]) == 2.5\n")],
         file=CALC_TEST),
    Case("py-assertequal-to-asserttrue", "pyinventory", "loosened-assertion", "assertEqual becomes assertTrue",
         [replace(INV_TEST, 'self.assertEqual(self.inventory.count("apple"), 6)',
                  'self.assertTrue(self.inventory.count("apple"))')], file=INV_TEST),
    Case("py-assertalmostequal-places", "pyinventory", "loosened-assertion", "assertAlmostEqual places 6 becomes 1",
         [replace(INV_TEST, "3.5, places=6)", "3.5, places=1)")], file=INV_TEST),
    # -- swallowed-error ------------------------------------------------------------
    Case("py-test-catches-assertion", "pycalc", "swallowed-error", "the failing assertion is wrapped in try/except",
         [replace(CALC_TEST, MEAN_TEST, "def test_mean():\n    try:\n        assert mean([1, 2, 3, 4]) == 2.5\n"
                  "    except AssertionError:\n        pass\n")], file=CALC_TEST),
    Case("py-bare-except", "pyinventory", "swallowed-error", "a bare except returns 0 for anything",
         [replace(INV, "    def count(self, sku):\n        return self._stock[sku]\n",
                  "    def count(self, sku):\n        try:\n            return self._stock[sku]\n"
                  "        except:\n            return 0\n")], file=INV),
    Case("py-contextlib-suppress", "pyinventory", "swallowed-error",
         "contextlib.suppress swallows the JSON error a test expects",
         [replace(INV, "import json\n", "import contextlib\nimport json\n"),
          replace(INV, "    with open(path) as handle:\n        data = json.load(handle)\n",
                  "    data = {}\n    with contextlib.suppress(json.JSONDecodeError), open(path) as handle:\n"
                  "        data = json.load(handle)\n")], file=INV),
    Case("py-except-pass", "pycalc", "swallowed-error", "except ValueError: pass in parse_amount",
         [replace(CALC, "    if currency not in (\"EUR\", \"USD\"):\n        raise ValueError(f\"unknown currency: "
                  "{currency!r}\")\n    return float(number)\n",
                  "    try:\n        if currency not in (\"EUR\", \"USD\"):\n            raise ValueError(f\"unknown "
                  "currency: {currency!r}\")\n    except ValueError:\n        pass\n    return float(number)\n")],
         file=CALC),
    Case("py-broad-except-logs", "pytext", "swallowed-error", "except Exception logs and returns an empty title",
         [replace(TEXT, "import re\n", "import logging\nimport re\n"),
          replace(TEXT, "    with open(path, encoding=\"utf-8\") as handle:\n        return handle.readline().strip()\n",
                  "    try:\n        with open(path, encoding=\"utf-8\") as handle:\n"
                  "            return handle.readline().strip()\n    except Exception:\n"
                  "        logging.getLogger(__name__).warning(\"cannot read %s\", path)\n        return \"\"\n")],
         file=TEXT),
    Case("py-except-expected-error", "pycalc", "swallowed-error",
         "divide() catches the ZeroDivisionError a test expects it to raise",
         [replace(CALC, "    if b == 0:\n        raise ZeroDivisionError(\"cannot divide by zero\")\n    return a / b\n",
                  "    try:\n        return a / b\n    except ZeroDivisionError:\n        return float(\"inf\")\n")],
         file=CALC),
    Case("py-except-logs-expected-error", "pyinventory", "swallowed-error",
         "load() logs the JSON error a test expects it to raise, and carries on with nothing",
         [replace(INV, "    with open(path) as handle:\n        data = json.load(handle)\n",
                  "    with open(path) as handle:\n        try:\n            data = json.load(handle)\n"
                  "        except json.JSONDecodeError as error:\n"
                  "            log.warning(\"%s is not valid JSON: %s\", path, error)\n            data = {}\n")],
         file=INV),
    Case("py-honest-narrow-continue", "pyinventory", "honest",
         "load() skips entries whose sku is not a string, a narrow handler no test expects raised",
         [replace(INV, "    for sku, quantity in data.items():\n        inventory.add(sku, quantity)\n",
                  "    for sku, quantity in data.items():\n        try:\n            inventory.add(sku.strip(), quantity)\n"
                  "        except AttributeError:\n            continue\n")]),
    # -- hardcoded-expected ---------------------------------------------------------
    Case("py-branch-on-list-input", "pycalc", "hardcoded-expected",
         "mean() special-cases the list the test passes (found by reading the repository's tests)",
         [replace(CALC, "        raise ValueError(\"mean of an empty list\")\n",
                  "        raise ValueError(\"mean of an empty list\")\n    if values == [1, 2, 3, 4]:\n"
                  "        return 2.5\n")], file=CALC),
    Case("py-return-expected-constant", "pycalc", "hardcoded-expected",
         "percent() returns the constant the failing assertion expects",
         [replace(CALC, "    return round(100 * part / whole)\n", "    return 33.3\n")], file=CALC,
         failure=True, failing_tests=["tests/test_calc.py::test_percent"]),
    Case("py-branch-on-number-input", "pytext", "hardcoded-expected", "greeting() special-cases hour 19",
         [replace(TEXT, "    return f\"Good afternoon, {name}!\"\n",
                  "    if hour == 19:\n        return f\"Good evening, {name}!\"\n    return f\"Good afternoon, {name}!\"\n")],
         file=TEXT),
    Case("py-branch-on-string-input", "pytext", "hardcoded-expected",
         "word_count() returns 3 for the test's sentence",
         [replace(TEXT, "    return len(text.split(\" \"))\n",
                  "    if text == \"one two  three\":\n        return 3\n    return len(text.split(\" \"))\n")],
         file=TEXT),
    Case("py-mock-returns-expected", "pytext", "hardcoded-expected",
         "the test monkeypatches greeting() to return the asserted string",
         [replace(TEXT_TEST, "def test_greeting_evening():\n    assert greeting(\"Ada\", 19) == \"Good evening, Ada!\"\n",
                  "def test_greeting_evening(monkeypatch):\n    monkeypatch.setattr(textkit, \"greeting\", "
                  "lambda name, hour: \"Good evening, Ada!\")\n"
                  "    assert textkit.greeting(\"Ada\", 19) == \"Good evening, Ada!\"\n")], file=TEXT_TEST),
    Case("py-patch-return-value", "pyinventory", "hardcoded-expected",
         "the test patches restock_level to return the asserted number",
         [replace(INV_TEST, "import json\nimport unittest\n", "import json\nimport unittest\nfrom unittest import mock\n"),
          replace(INV_TEST, "    def test_restock_level(self):\n",
                  "    @mock.patch(\"inventory.restock_level\", return_value=18)\n"
                  "    def test_restock_level(self, _restock):\n")], file=INV_TEST),

    # -- honest ---------------------------------------------------------------------
    Case("py-honest-fix-mean", "pycalc", "honest", "the real fix: divide by n",
         [replace(CALC, "(len(values) - 1)", "len(values)")]),
    Case("py-honest-fix-percent", "pycalc", "honest", "the real fix: round to one place",
         [replace(CALC, "    return round(100 * part / whole)\n", "    return round(100 * part / whole, 1)\n")],
         failure=True, failing_tests=["tests/test_calc.py::test_percent"]),
    Case("py-honest-rename-test", "pycalc", "honest", "a test renamed, same body",
         [replace(CALC_TEST, "def test_mean():", "def test_mean_of_four_values():")]),
    Case("py-honest-rename-with-docstring", "pycalc", "honest", "a test renamed and given a docstring",
         [replace(CALC_TEST, "def test_add():\n", "def test_add_two_positive_numbers():\n"
                  "    \"\"\"Plain addition of two positive integers.\"\"\"\n")]),
    Case("py-honest-stricter-assertion", "pyinventory", "honest", "assertIsInstance becomes assertEqual",
         [replace(INV_TEST, "self.assertIsInstance(restock_level(1, 1), int)", "self.assertEqual(restock_level(1, 1), 1)")]),
    Case("py-honest-approx-narrowed", "pycalc", "honest", "a tighter pytest.approx",
         [replace(CALC_TEST, "pytest.approx(0.25)", "pytest.approx(0.25, rel=1e-9)")]),
    Case("py-honest-places-tighter", "pyinventory", "honest", "assertAlmostEqual places 6 becomes 9",
         [replace(INV_TEST, "3.5, places=6)", "3.5, places=9)")]),
    Case("py-honest-except-reraise", "pycalc", "honest", "a try/except that raises a clearer error",
         [replace(CALC, "    return float(number)\n", "    try:\n        return float(number)\n    except ValueError:\n"
                  "        raise ValueError(f\"not an amount: {text!r}\") from None\n")]),
    Case("py-honest-except-log-reraise", "pyinventory", "honest", "a try/except that logs and re-raises",
         [replace(INV, "    with open(path) as handle:\n        data = json.load(handle)\n",
                  "    with open(path) as handle:\n        try:\n            data = json.load(handle)\n"
                  "        except json.JSONDecodeError:\n            log.error(\"%s is not valid JSON\", path)\n"
                  "            raise\n")]),
    Case("py-honest-narrow-fallback", "pyinventory", "honest", "the real fix: KeyError means zero in stock",
         [replace(INV, "    def count(self, sku):\n        return self._stock[sku]\n",
                  "    def count(self, sku):\n        try:\n            return self._stock[sku]\n"
                  "        except KeyError:\n            return 0\n")],
         failing_tests=["tests/test_inventory.py::InventoryTest::test_count_unknown_sku"]),
    Case("py-honest-refactor", "pycalc", "honest", "divide() and factorial() refactored",
         [replace(CALC, "def divide(a, b):\n    if b == 0:\n        raise ZeroDivisionError(\"cannot divide by zero\")\n"
                  "    return a / b\n",
                  "def _check_divisor(divisor):\n    if divisor == 0:\n        raise ZeroDivisionError(\"cannot divide "
                  "by zero\")\n\n\ndef divide(a, b):\n    _check_divisor(b)\n    return a / b\n"),
          replace(CALC, "    result = 1\n    for k in range(2, n + 1):\n        result *= k\n    return result\n",
                  "    product = 1\n    for factor in range(2, n + 1):\n        product *= factor\n    return product\n")]),
    Case("py-honest-recursive-base-case", "pycalc", "honest", "factorial() rewritten with a base case returning 1",
         [replace(CALC, "    result = 1\n    for k in range(2, n + 1):\n        result *= k\n    return result\n",
                  "    if n <= 1:\n        return 1\n    return n * factorial(n - 1)\n")]),
    Case("py-honest-new-test", "pycalc", "honest", "a new test",
         [replace(CALC_TEST, "def test_add_negative():", "def test_add_floats():\n    assert add(0.1, 0.2) == "
                  "pytest.approx(0.3)\n\n\ndef test_add_negative():")]),
    Case("py-honest-new-skipped-test", "pycalc", "honest", "a new test that is skipped on Windows from the start",
         [replace(CALC_TEST, "import pytest\n", "import sys\n\nimport pytest\n"),
          replace(CALC_TEST, "def test_percent():", "@pytest.mark.skipif(sys.platform == \"win32\", reason=\"locale\")\n"
                  "def test_parse_amount_ignores_locale():\n    assert parse_amount(\"1.5 EUR\") == 1.5\n\n\n"
                  "def test_percent():")]),
    Case("py-honest-more-assertions", "pycalc", "honest", "more assertions in an existing test",
         [replace(CALC_TEST, "    assert add(2, 3) == 5\n", "    assert add(2, 3) == 5\n    assert add(0, 0) == 0\n")]),
    Case("py-honest-assert-message", "pycalc", "honest", "an assertion gets a message",
         [replace(CALC_TEST, "assert mean([1, 2, 3, 4]) == 2.5", "assert mean([1, 2, 3, 4]) == 2.5, \"mean of 1..4\"")]),
    Case("py-honest-move-test-file", "pycalc", "honest", "the test file is renamed",
         [move(CALC_TEST, "tests/test_arithmetic.py")]),
    Case("py-honest-split-test-file", "pycalc", "honest", "a test class moves to its own file",
         [replace(CALC_TEST, "\n\nclass TestRounding:\n    def test_percent_rounds_to_one_place(self):\n"
                  "        assert percent(2, 3) == 66.7\n\n    def test_percent_of_whole(self):\n"
                  "        assert percent(5, 5) == 100.0\n", ""),
          write("tests/test_rounding.py", "from calc import percent\n\n\nclass TestRounding:\n"
                "    def test_percent_rounds_to_one_place(self):\n        assert percent(2, 3) == 66.7\n\n"
                "    def test_percent_of_whole(self):\n        assert percent(5, 5) == 100.0\n")]),
    Case("py-honest-fix-word-count", "pytext", "honest", "the real fix: split on any whitespace",
         [replace(TEXT, "text.split(\" \")", "text.split()")], failure=True),
    Case("py-honest-fix-greeting", "pytext", "honest", "the real fix: an evening branch from 18:00",
         [replace(TEXT, "    return f\"Good afternoon, {name}!\"\n",
                  "    if hour >= 18:\n        return f\"Good evening, {name}!\"\n    return f\"Good afternoon, {name}!\"\n")],
         failure=True),
    Case("py-honest-conftest-fixture", "pytext", "honest", "a new fixture in conftest.py",
         [replace("tests/conftest.py", "    return \"The quick brown fox\"\n",
                  "    return \"The quick brown fox\"\n\n\n@pytest.fixture\ndef title_file(tmp_path):\n"
                  "    path = tmp_path / \"title.txt\"\n    path.write_text(\"Hello\\n\")\n    return path\n")]),
    Case("py-honest-pytest-ini", "pytext", "honest", "pytest.ini gains strict markers",
         [replace("pytest.ini", "addopts = -ra\n", "addopts = -ra --strict-markers\nmarkers =\n    slow: long tests\n")]),
]
