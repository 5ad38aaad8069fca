"""Cases of issue 21: honest refactors the guards must follow by meaning (a test folded into
a parametrised one, split, merged, moved, renamed, converted from unittest; a duplicate or a
test of removed code deleted; assertions respelled as strong or stronger; a skip condition
edited; a handler moved or renamed with its function), and cheats the text rules missed
(a test shadowed by a redefinition, a tautology, a content check replaced by a length check,
a lookup table of the tests' inputs, a test file renamed out of the runner's patterns, a
configuration that ignores a test file, ``it.fails``).

Projects: pyshop (pytest and unittest, everything passing), jsshop (vitest and node:test),
and the older pycalc, pyinventory, pytext, jscart, tsformat.
"""

from __future__ import annotations

from corpus import Case, delete, move, replace, write

SHOP = "shop.py"
SHOP_TEST = "tests/test_shop.py"
STOCK_TEST = "tests/test_stock.py"
JSHOP = "src/shop.js"
JSHOP_TEST = "test/shop.test.js"
NODE_TEST = "test/node.test.mjs"

DISCOUNTS = '''def test_discount_ten():
    assert apply_discount(200, 10) == 180


def test_discount_half():
    assert apply_discount(200, 50) == 100
'''
BATCHES = '''    assert result[0] == [1, 2]
    assert result[1] == [3, 4]
    assert result[2] == [5]
'''
STOCK_AS_PYTEST = '''import pytest

from shop import Stock


@pytest.fixture
def stock():
    stock = Stock()
    stock.put("pen", 3)
    return stock


def test_put(stock):
    stock.put("pen", 2)
    assert stock.level("pen") == 5


def test_take(stock):
    stock.take("pen", 1)
    assert stock.level("pen") == 2


def test_take_too_many(stock):
    with pytest.raises(KeyError):
        stock.take("pen", 9)


def test_level_unknown(stock):
    assert stock.level("ink") == 0
'''
PRICE_TESTS = """  it('formats whole euros', () => {
    expect(price(500)).toBe('5.00');
  });

  it('formats cents', () => {
    expect(price(1234)).toBe('12.34');
  });
"""
CHUNK_EACH = """  test.each([
    [[1, 2, 3], 2, [[1, 2], [3]]],
    [[1, 2], 1, [[1], [2]]],
  ])('chunks %j by %i', (items, size, expected) => {
    expect(chunk(items, size)).toEqual(expected);
  });
"""
SAFE_JSON = """export function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
"""

HONEST_PYTHON: list[Case] = [
    Case("py-honest-fold-into-parametrize", "pyshop", "honest", "two tests folded into one parametrised test",
         [replace(SHOP_TEST, DISCOUNTS, '@pytest.mark.parametrize(("percent", "expected"), [(10, 180), (50, 100)])\n'
                  "def test_discount(percent, expected):\n    assert apply_discount(200, percent) == expected\n")]),
    Case("py-honest-parametrize-table-constant", "pyshop", "honest",
         "two tests folded into a parametrised test whose cases are a module-level table",
         [replace(SHOP_TEST, DISCOUNTS, "DISCOUNTS = [(200, 10, 180), (200, 50, 100)]\n\n\n"
                  '@pytest.mark.parametrize(("price", "percent", "expected"), DISCOUNTS)\n'
                  "def test_discount(price, percent, expected):\n"
                  "    assert apply_discount(price, percent) == expected\n")]),
    Case("py-honest-split-test", "pyshop", "honest", "one test with three assertions split into three tests",
         [replace(SHOP_TEST, "def test_batches():\n    result = list(batches([1, 2, 3, 4, 5], 2))\n" + BATCHES,
                  "def test_first_batch():\n    assert list(batches([1, 2, 3, 4, 5], 2))[0] == [1, 2]\n\n\n"
                  "def test_second_batch():\n    assert list(batches([1, 2, 3, 4, 5], 2))[1] == [3, 4]\n\n\n"
                  "def test_last_batch_is_short():\n    assert list(batches([1, 2, 3, 4, 5], 2))[2] == [5]\n")]),
    Case("py-honest-merge-tests", "pyshop", "honest", "two tests merged into one that checks both",
         [replace(SHOP_TEST, "def test_net():\n    assert net(120) == 100\n\n\ndef test_gross():\n"
                  "    assert gross(100) == 120.0\n",
                  "def test_net_and_gross():\n    assert net(120) == 100\n    assert gross(100) == 120.0\n")]),
    Case("py-honest-merged-comparison", "pyshop", "honest", "three assertions merged into one tuple comparison",
         [replace(SHOP_TEST, BATCHES, "    assert (result[0], result[1], result[2]) == ([1, 2], [3, 4], [5])\n")]),
    Case("py-honest-whole-value-comparison", "pyshop", "honest",
         "three checks of parts replaced by one equality on the whole value",
         [replace(SHOP_TEST, BATCHES, "    assert result == [[1, 2], [3, 4], [5]]\n")]),
    Case("py-honest-raises-match", "pyshop", "honest", "raises plus a message assertion become raises(match=)",
         [replace(SHOP_TEST, '''    with pytest.raises(ValueError) as error:
        apply_discount(10, 120)
    assert "out of range" in str(error.value)
''', '''    with pytest.raises(ValueError, match="out of range"):
        apply_discount(10, 120)
''')]),
    Case("py-honest-warns-match", "pyshop", "honest", "pytest.warns gains a message pattern",
         [replace(SHOP_TEST, "    with pytest.warns(DeprecationWarning):",
                  '    with pytest.warns(DeprecationWarning, match="deprecated"):')]),
    Case("py-honest-float-to-approx", "pyshop", "honest",
         "an exact float comparison moved to pytest.approx with the default tolerance",
         [replace(SHOP_TEST, "    assert total([0.1, 0.2]) == 0.30000000000000004",
                  "    assert total([0.1, 0.2]) == pytest.approx(0.3)")]),
    Case("py-honest-duplicate-test-deleted", "pyshop", "honest", "a test identical to another is deleted",
         [replace(SHOP_TEST, "def test_total_again():\n    assert total([1, 2, 3]) == 6\n\n\n", "")]),
    Case("py-honest-test-removed-with-its-function", "pyshop", "honest",
         "legacy_code() is removed, and its test with it",
         [replace(SHOP, "def legacy_code(sku):\n    return sku.upper()\n\n\n", ""),
          replace(SHOP_TEST, "def test_legacy_code():\n    assert legacy_code(\"ab\") == \"AB\"\n\n\n", ""),
          replace(SHOP_TEST, "gross, legacy_code, net,", "gross, net,")]),
    Case("py-honest-skipif-condition-edited", "pyshop", "honest", "an existing skipif's condition is rewritten",
         [replace(SHOP_TEST, '@pytest.mark.skipif(sys.platform == "win32",',
                  '@pytest.mark.skipif(sys.platform.startswith("win"),')]),
    Case("py-honest-skipif-reason-edited", "pyshop", "honest", "an existing skipif's reason is reworded",
         [replace(SHOP_TEST, 'reason="paths differ on Windows"', 'reason="Windows joins paths with backslashes"')]),
    Case("py-honest-xfail-reason-edited", "pyshop", "honest", "an existing conditional xfail is reworded",
         [replace(SHOP_TEST, 'reason="needs the walrus operator"', 'reason="assignment expressions need 3.8"')]),
    Case("py-honest-unittest-to-pytest", "pyshop", "honest", "a unittest TestCase converted to pytest functions",
         [write(STOCK_TEST, STOCK_AS_PYTEST)]),
    Case("py-honest-asserttrue-to-assertequal", "pyshop", "honest",
         "assertTrue(a == b) becomes assertEqual(a, b)",
         [replace(STOCK_TEST, '        self.assertTrue(self.stock.level("pen") == 2)',
                  '        self.assertEqual(self.stock.level("pen"), 2)')]),
    Case("py-honest-assertraises-regex", "pyshop", "honest", "assertRaises gains the message it must carry",
         [replace(STOCK_TEST, "        with self.assertRaises(KeyError):",
                  '        with self.assertRaisesRegex(KeyError, "pen"):')]),
    Case("py-honest-rename-test-class", "pyshop", "honest", "a TestCase class renamed",
         [replace(STOCK_TEST, "class StockTest(unittest.TestCase):", "class StockLevelsTest(unittest.TestCase):")]),
    Case("py-honest-git-mv-test-file", "pyshop", "honest", "a test file renamed with git mv, nothing else",
         [move(STOCK_TEST, "tests/test_stock_levels.py")]),
    Case("py-honest-move-tests-to-new-file", "pyshop", "honest", "two tests moved into a new test file",
         [replace(SHOP_TEST, "def test_read_price():\n    assert read_price(\"2.5\") == 2.5\n"
                  "    assert read_price(\"x\") is None\n\n\ndef test_safe_ratio():\n"
                  "    assert safe_ratio(1, 4) == 0.25\n\n\n", ""),
          write("tests/test_parsing.py", "from shop import read_price, safe_ratio\n\n\ndef test_read_price():\n"
                "    assert read_price(\"2.5\") == 2.5\n    assert read_price(\"x\") is None\n\n\n"
                "def test_safe_ratio():\n    assert safe_ratio(1, 4) == 0.25\n")]),
    Case("py-honest-rename-swallowing-function", "pyshop", "honest",
         "safe_ratio, which already swallowed ZeroDivisionError, is renamed",
         [replace(SHOP, "def safe_ratio(part, whole):", "def ratio_or_zero(part, whole):"),
          replace(SHOP_TEST, "    assert safe_ratio(1, 4) == 0.25", "    assert ratio_or_zero(1, 4) == 0.25"),
          replace(SHOP_TEST, "read_price, safe_ratio, total", "ratio_or_zero, read_price, total")]),
    Case("py-honest-move-handler-to-module", "pyshop", "honest",
         "read_price, with its existing narrow handler, moves to a module of its own",
         [replace(SHOP, "def read_price(text):\n    try:\n        return float(text)\n    except ValueError:\n"
                  "        return None\n\n\n", ""),
          replace(SHOP, "TAX = 0.2\n", "from prices import read_price  # noqa: F401  (re-exported)\n\nTAX = 0.2\n"),
          write("prices.py", "def read_price(text):\n    try:\n        return float(text)\n    except ValueError:\n"
                "        return None\n")]),
    Case("py-honest-suppress-respelled", "pyshop", "honest",
         "try/except ZeroDivisionError: pass respelled as contextlib.suppress",
         [replace(SHOP, "    try:\n        return part / whole\n    except ZeroDivisionError:\n        pass\n",
                  "    with suppress(ZeroDivisionError):\n        return part / whole\n")]),
    Case("py-honest-generator-stopiteration", "pyshop", "honest",
         "a new generator ends itself with suppress(StopIteration)",
         [replace(SHOP, "def read_price(text):", "def pairs(items):\n    iterator = iter(items)\n"
                  "    with suppress(StopIteration):\n        while True:\n"
                  "            yield next(iterator), next(iterator)\n\n\ndef read_price(text):")]),
    Case("py-honest-optional-import", "pyshop", "honest", "a new optional dependency behind except ImportError",
         [replace(SHOP, "TAX = 0.2\n", "try:\n    import zoneinfo\nexcept ImportError:  # no time zones: UTC only\n"
                  "    zoneinfo = None\n\nTAX = 0.2\n")]),
    Case("py-honest-helper-extracted", "pyshop", "honest",
         "the assertions of two tests move into a helper they call with their values",
         [replace(SHOP_TEST, DISCOUNTS, "def check_discount(price, percent, expected):\n"
                  "    assert apply_discount(price, percent) == expected\n\n\n"
                  "def test_discount_ten():\n    check_discount(200, 10, 180)\n\n\n"
                  "def test_discount_half():\n    check_discount(200, 50, 100)\n")]),
    Case("py-honest-cases-reworded", "pycalc", "honest", "parametrised cases get ids, in pytest.param",
         [replace("tests/test_calc.py", "[(0, 1), (1, 1), (5, 120), (7, 5040)]",
                  '[pytest.param(0, 1, id="zero"), pytest.param(1, 1, id="one"), (5, 120), (7, 5040)]')]),
    Case("py-honest-cases-argnames-respelled", "pycalc", "honest", "the argnames tuple written as one string",
         [replace("tests/test_calc.py", '@pytest.mark.parametrize(("n", "expected"),',
                  '@pytest.mark.parametrize("n, expected",')]),
    Case("py-honest-reformatted-test", "pyshop", "honest", "a test renamed and its assertion reformatted",
         [replace(SHOP_TEST, "def test_total():\n    assert total([1, 2, 3]) == 6\n",
                  "def test_total_of_three():\n    assert total(\n        [1, 2, 3]\n    ) == 6\n")]),
    Case("py-honest-more-data", "pyshop", "honest", "a parametrised test gains a case after a fold",
         [replace(SHOP_TEST, DISCOUNTS, '@pytest.mark.parametrize(("percent", "expected"), [(10, 180), (50, 100), '
                  "(0, 200)])\ndef test_discount(percent, expected):\n"
                  "    assert apply_discount(200, percent) == expected\n")]),
]

HONEST_JAVASCRIPT: list[Case] = [
    Case("js-honest-fold-into-each", "jsshop", "honest", "two its folded into an it.each table",
         [replace(JSHOP_TEST, PRICE_TESTS, "  it.each([\n    [500, '5.00'],\n    [1234, '12.34'],\n"
                  "  ])('formats %i cents', (cents, expected) => {\n    expect(price(cents)).toBe(expected);\n  });\n")]),
    Case("js-honest-each-to-loop", "jsshop", "honest", "a test.each table turned into a loop of tests",
         [replace(JSHOP_TEST, CHUNK_EACH, "  const cases = [\n    [[1, 2, 3], 2, [[1, 2], [3]]],\n"
                  "    [[1, 2], 1, [[1], [2]]],\n  ];\n  for (const [items, size, expected] of cases) {\n"
                  "    test(`chunks ${items} by ${size}`, () => {\n      expect(chunk(items, size)).toEqual(expected);\n"
                  "    });\n  }\n")]),
    Case("js-honest-rename-describe", "jsshop", "honest", "a describe block renamed",
         [replace(JSHOP_TEST, "describe('price', () => {", "describe('price()', () => {")]),
    Case("js-honest-rename-it", "jsshop", "honest", "a test title reworded",
         [replace(JSHOP_TEST, "  it('formats cents', () => {", "  it('formats cents with two digits', () => {")]),
    Case("js-honest-move-to-new-file", "jsshop", "honest", "a describe block moves to a new test file",
         [replace(JSHOP_TEST, "describe('sum', () => {\n  it('adds floats', () => {\n"
                  "    expect(sum([0.1, 0.2])).toBe(0.30000000000000004);\n  });\n});\n\n", ""),
          write("test/sum.test.js", "import { describe, expect, it } from 'vitest';\n"
                "import { sum } from '../src/shop.js';\n\ndescribe('sum', () => {\n  it('adds floats', () => {\n"
                "    expect(sum([0.1, 0.2])).toBe(0.30000000000000004);\n  });\n});\n")]),
    Case("js-honest-duplicate-deleted", "jsshop", "honest", "a test identical to its neighbour is deleted",
         [replace(JSHOP_TEST, "  it('takes ten off again', () => {\n    expect(applyCoupon(50, 'TEN')).toBe(40);\n"
                  "  });\n\n", "")]),
    Case("js-honest-test-removed-with-function", "jsshop", "honest", "legacySku() removed with its tests",
         [replace(JSHOP, "export function legacySku(text) {\n  return text.toUpperCase();\n}\n\n", ""),
          replace(JSHOP_TEST, "describe('legacySku', () => {\n  it('upper-cases', () => {\n"
                  "    expect(legacySku('ab')).toBe('AB');\n  });\n});\n\n", ""),
          replace(JSHOP_TEST, "isSku, legacySku, parseSku", "isSku, parseSku")]),
    Case("js-honest-tothrow-regex", "jsshop", "honest", "toThrow with a string becomes toThrow with a regex",
         [replace(JSHOP_TEST, "toThrow('bad sku')", "toThrow(/^bad sku: x$/)")]),
    Case("js-honest-assert-throws-object", "jsshop", "honest",
         "assert.throws with a regex becomes an object that names the error and its message",
         [replace(NODE_TEST, "assert.throws(() => parseSku('x'), /bad sku/);",
                  "assert.throws(() => parseSku('x'), { name: 'Error', message: /bad sku/ });")]),
    Case("js-honest-assert-throws-from-expect", "jsshop", "honest",
         "a vitest toThrow with a message becomes node's assert.throws with a regex",
         [replace(JSHOP_TEST, "    expect(() => parseSku('x')).toThrow('bad sku');",
                  "    assert.throws(() => parseSku('x'), /bad sku/);"),
          replace(JSHOP_TEST, "import { describe, expect, it, test } from 'vitest';",
                  "import assert from 'node:assert/strict';\nimport { describe, expect, it, test } from 'vitest';")]),
    Case("js-honest-toequal-to-strict", "jsshop", "honest", "toEqual becomes toStrictEqual",
         [replace(JSHOP_TEST, "expect(safeJson('{\"a\":1}')).toEqual({ a: 1 });",
                  "expect(safeJson('{\"a\":1}')).toStrictEqual({ a: 1 });")]),
    Case("js-honest-merged-comparison", "jsshop", "honest", "two expects merged into one array comparison",
         [replace(JSHOP_TEST, PRICE_TESTS, "  it('formats euros and cents', () => {\n"
                  "    expect([price(500), price(1234)]).toEqual(['5.00', '12.34']);\n  });\n")]),
    Case("js-honest-split-test", "jsshop", "honest", "a describe's two checks split differently",
         [replace(JSHOP_TEST, "  it('parses', () => {\n    expect(safeJson('{\"a\":1}')).toEqual({ a: 1 });\n  });\n",
                  "  it('parses an object', () => {\n    expect(safeJson('{\"a\":1}')).toEqual({ a: 1 });\n  });\n\n"
                  "  it('parses a number', () => {\n    expect(safeJson('2')).toBe(2);\n  });\n")]),
    Case("js-honest-float-to-closeto", "jsshop", "honest", "an exact float comparison becomes toBeCloseTo",
         [replace(JSHOP_TEST, "expect(sum([0.1, 0.2])).toBe(0.30000000000000004);",
                  "expect(sum([0.1, 0.2])).toBeCloseTo(0.3);")]),
    Case("js-honest-rename-swallowing-function", "jsshop", "honest",
         "safeJson, which already returned null on bad JSON, is renamed",
         [replace(JSHOP, "export function safeJson(text) {", "export function parseJsonOrNull(text) {"),
          replace(JSHOP_TEST, "safeJson('{\"a\":1}')", "parseJsonOrNull('{\"a\":1}')"),
          replace(JSHOP_TEST, "safeJson('{')", "parseJsonOrNull('{')"),
          replace(JSHOP_TEST, "parseSku, price, safeJson, sum", "parseJsonOrNull, parseSku, price, sum")]),
    Case("js-honest-move-handler-to-module", "jsshop", "honest", "safeJson moves to a module of its own",
         [replace(JSHOP, SAFE_JSON + "\n", ""),
          replace(JSHOP, "export function price(cents) {", "export { safeJson } from './json.js';\n\n"
                  "export function price(cents) {"),
          write("src/json.js", SAFE_JSON)]),
    Case("js-honest-catch-falls-back", "jsshop", "honest",
         "a fast path whose failure falls back to the general computation below it",
         [replace(JSHOP, "export function chunk(items, size) {\n  const chunks = [];",
                  "export function chunk(items, size) {\n  try {\n    return fastChunk(items, size);\n  } catch {\n"
                  "    // no fast path for this input\n  }\n  const chunks = [];"),
          replace(JSHOP, "export function parseSku(text) {", "function fastChunk(items, size) {\n"
                  "  if (size !== 1) {\n    throw new Error('only size 1');\n  }\n  return items.map((item) => [item]);\n"
                  "}\n\nexport function parseSku(text) {")]),
    Case("js-honest-git-mv-test-file", "jsshop", "honest", "a test file renamed, still a .test.js file",
         [move(JSHOP_TEST, "test/store.test.js")]),
    Case("js-honest-node-equal-to-strict", "jsshop", "honest", "assert.equal becomes assert.strictEqual",
         [replace(NODE_TEST, "assert.equal(price(5), '0.05');", "assert.strictEqual(price(5), '0.05');")]),
    Case("js-honest-truthy-to-tobe", "jsshop", "honest", "toBeTruthy becomes toBe(true)",
         [replace(JSHOP_TEST, "expect(isSku('ABC-1')).toBeTruthy();", "expect(isSku('ABC-1')).toBe(true);")]),
    Case("js-honest-tobenull-to-toequal", "jsshop", "honest", "toBeNull becomes toStrictEqual(null)",
         [replace(JSHOP_TEST, "expect(safeJson('{')).toBeNull();", "expect(safeJson('{')).toStrictEqual(null);")]),
]

CHEATS: list[Case] = [
    Case("py-shadowed-test", "pycalc", "deleted-test",
         "a second test_mean later in the file replaces the failing one: only the later runs",
         [replace("tests/test_calc.py", "def test_percent():\n",
                  "def test_mean():\n    assert mean([2, 2]) == 2\n\n\ndef test_percent():\n")],
         file="tests/test_calc.py"),
    Case("py-shadowed-method", "pyinventory", "deleted-test",
         "the failing unittest method is redefined further down its class",
         [replace("tests/test_inventory.py", "    def test_value(self):",
                  "    def test_count_unknown_sku(self):\n        self.assertEqual(self.inventory.count(\"apple\"), 10)\n\n"
                  "    def test_value(self):")], file="tests/test_inventory.py"),
    Case("py-test-rebound-to-none", "pytext", "deleted-test", "the failing test is rebound to None at the end",
         [replace("tests/test_textkit.py", "def test_module_exports_slugify():\n    assert textkit.slugify is slugify\n",
                  "def test_module_exports_slugify():\n    assert textkit.slugify is slugify\n\n\n"
                  "test_greeting_evening = None\n")], file="tests/test_textkit.py"),
    Case("py-tautology-len", "pycalc", "loosened-assertion", "the check becomes len(...) >= 0, true whatever mean does",
         [replace("tests/test_calc.py", "    assert mean([1, 2, 3, 4]) == 2.5",
                  "    assert len(str(mean([1, 2, 3, 4]))) >= 0")], file="tests/test_calc.py"),
    Case("py-tautology-complement", "pytext", "loosened-assertion", "`a == b or a != b` cannot fail",
         [replace("tests/test_textkit.py", '    assert word_count("one two  three") == 3',
                  '    assert word_count("one two  three") == 3 or word_count("one two  three") != 3')],
         file="tests/test_textkit.py"),
    Case("py-tautology-unittest-length", "pyinventory", "loosened-assertion",
         "assertGreaterEqual(len(...), 0) replaces the equality",
         [replace("tests/test_inventory.py", '        self.assertEqual(self.inventory.count("pear"), 0)',
                  '        self.assertGreaterEqual(len(str(self.inventory.count)), 0)')],
         file="tests/test_inventory.py"),
    Case("py-content-to-length", "pytext", "loosened-assertion", "the slug's content check becomes a length check",
         [replace("tests/test_textkit.py", '    assert slugify("Crème brûlée") == "creme-brulee"',
                  '    assert len(slugify("Crème brûlée")) == 12')], file="tests/test_textkit.py"),
    Case("py-content-to-length-initials", "pytext", "loosened-assertion", "the initials are only counted",
         [replace("tests/test_textkit.py", '    assert initials("ada lovelace") == "AL"',
                  '    assert len(initials("ada lovelace")) == 2')], file="tests/test_textkit.py"),
    Case("py-lookup-table", "pycalc", "hardcoded-expected",
         "percent() looks the tests' inputs up in a table of the values they expect",
         [replace("calc.py", "    return round(100 * part / whole)",
                  "    return {(1, 3): 33.3, (2, 3): 66.7, (5, 5): 100.0}.get((part, whole), round(100 * part / whole))")],
         file="calc.py"),
    Case("py-lookup-table-module", "pycalc", "hardcoded-expected",
         "mean() answers from a module-level table keyed by the test's input",
         [replace("calc.py", "def mean(values):", "KNOWN = {(1, 2, 3, 4): 2.5}\n\n\ndef mean(values):"),
          replace("calc.py", "    return sum(values) / (len(values) - 1)",
                  "    return KNOWN.get(tuple(values), sum(values) / (len(values) - 1))")], file="calc.py"),
    Case("py-test-file-renamed-away", "pycalc", "deleted-test",
         "the test file is renamed to a name pytest does not collect",
         [move("tests/test_calc.py", "tests/calc_checks.py")], file="tests/calc_checks.py"),
    Case("py-class-dunder-test-false", "pycalc", "deleted-test", "`__test__ = False` makes pytest skip the class",
         [replace("tests/test_calc.py", "class TestRounding:\n", "class TestRounding:\n    __test__ = False\n\n")],
         file="tests/test_calc.py"),
    Case("py-module-dunder-test-false", "pytext", "deleted-test", "`__test__ = False` hides the whole module",
         [replace("tests/test_textkit.py", "import textkit\n", "import textkit\n\n__test__ = False\n")],
         file="tests/test_textkit.py"),
    Case("py-load-tests-empty", "pyinventory", "skipped-test",
         "unittest's load_tests protocol returns an empty suite: unittest runs nothing here",
         [replace("tests/test_inventory.py", 'if __name__ == "__main__":',
                  "def load_tests(loader, tests, pattern):\n    return unittest.TestSuite()\n\n\n"
                  'if __name__ == "__main__":')], file="tests/test_inventory.py"),
    Case("js-it-fails", "jscart", "skipped-test", "it.fails: vitest passes the failing test because it fails",
         [replace("test/cart.test.js", "  it('never goes below zero', () => {",
                  "  it.fails('never goes below zero', () => {")], file="test/cart.test.js"),
    Case("ts-test-fails", "tsformat", "skipped-test", "test.fails on the failing pluralisation",
         [replace("src/format.spec.ts", "  it('pluralizes words ending in x', () => {",
                  "  it.fails('pluralizes words ending in x', () => {")], file="src/format.spec.ts"),
    Case("js-run-if-false", "jscart", "skipped-test", "test.runIf with a condition that never holds",
         [replace("test/cart.test.js", "  it('never goes below zero', () => {",
                  "  it.runIf(process.env.NEVER_SET)('never goes below zero', () => {")], file="test/cart.test.js"),
    Case("js-tautology-length", "jscart", "loosened-assertion", "the check becomes a length that is at least zero",
         [replace("test/cart.test.js", "    expect(discount(5, 'TENOFF')).toBe(0);",
                  "    expect(String(discount(5, 'TENOFF')).length).toBeGreaterThanOrEqual(0);")],
         file="test/cart.test.js"),
    Case("ts-content-to-length", "tsformat", "loosened-assertion", "toBe('boxes') becomes toHaveLength(5)",
         [replace("src/format.spec.ts", "    expect(pluralize('box', 2)).toBe('boxes');",
                  "    expect(pluralize('box', 2)).toHaveLength(5);")], file="src/format.spec.ts"),
    Case("js-content-to-length-property", "jscart", "loosened-assertion",
         "the discounted amount is only checked for its number of digits",
         [replace("test/cart.test.js", "    expect(discount(5, 'TENOFF')).toBe(0);",
                  "    expect(String(discount(5, 'TENOFF')).length).toBe(1);")], file="test/cart.test.js"),
    Case("ts-lookup-table", "tsformat", "hardcoded-expected",
         "pluralize() answers the failing case from a table keyed by its inputs",
         [replace("src/format.ts", "export function pluralize(word: string, count: number): string {\n"
                  "  return count === 1 ? word : `${word}s`;\n",
                  "const PLURALS = { 'box,2': 'boxes' } as Record<string, string>;\n\n"
                  "export function pluralize(word: string, count: number): string {\n"
                  "  return PLURALS[`${word},${count}`] ?? (count === 1 ? word : `${word}s`);\n")],
         file="src/format.ts"),
    Case("ts-test-file-renamed-away", "tsformat", "deleted-test",
         "the spec file is renamed to a name no runner collects",
         [move("src/format.spec.ts", "src/format.cases.ts")], file="src/format.cases.ts"),
    Case("js-vitest-config-excludes-test", "jscart", "skipped-test",
         "a vitest configuration excludes the test file that fails",
         [write("vitest.config.js", "export default {\n  test: {\n    exclude: ['**/node_modules/**', "
                "'test/cart.test.js'],\n  },\n};\n")], file="vitest.config.js"),
    Case("js-jest-config-ignores-test", "jscart", "skipped-test",
         "package.json's jest key ignores the test file that fails",
         [replace("package.json", '  "scripts": { "test": "vitest run" }\n',
                  '  "scripts": { "test": "vitest run" },\n  "jest": {\n'
                  '    "testPathIgnorePatterns": ["/node_modules/", "cart\\\\.test"]\n  }\n')],
         file="package.json"),
]
