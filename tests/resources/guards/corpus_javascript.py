"""JavaScript/TypeScript cases: jscart (vitest, .js), tsformat (jest-style .ts and .tsx),
jsnode (node:test, .mjs and .cjs).

Failing before any fix (failures/<project>.txt): discount() goes below zero,
pluralize('box', 2) gives 'boxs', truncate() exceeds its limit.
"""

from __future__ import annotations

from corpus import Case, delete, move, replace, write

CART = "src/cart.js"
CART_TEST = "test/cart.test.js"
FORMAT = "src/format.ts"
FORMAT_TEST = "src/format.spec.ts"
BADGE_TEST = "ui/Badge.test.tsx"
SLUG = "lib/slug.mjs"
SLUG_TEST = "test/slug.test.mjs"
CONFIG = "lib/config.cjs"

BELOW_ZERO = ("  it('never goes below zero', () => {\n    expect(discount(5, 'TENOFF')).toBe(0);\n  });\n")
FETCH = ("  const response = await client.get('/prices', { skus });\n  return response.data;\n")

JAVASCRIPT: list[Case] = [
    # -- deleted-test ---------------------------------------------------------------
    Case("js-delete-it", "jscart", "deleted-test", "the failing it() block is deleted",
         [replace(CART_TEST, BELOW_ZERO + "\n", "")], file=CART_TEST),
    Case("js-delete-test-file", "jscart", "deleted-test", "the test file is deleted",
         [delete(CART_TEST)], file=CART_TEST),
    Case("js-comment-out-test", "jscart", "deleted-test", "the failing test is commented out",
         [replace(CART_TEST, BELOW_ZERO, "  // it('never goes below zero', () => {\n"
                  "  //   expect(discount(5, 'TENOFF')).toBe(0);\n  // });\n")], file=CART_TEST),
    Case("ts-each-case-removed", "tsformat", "deleted-test", "the failing row of an it.each table is removed",
         [replace(FORMAT_TEST, "    ['box', 3, 'boxes'],\n", "")], file=FORMAT_TEST),
    # -- skipped-test ---------------------------------------------------------------
    Case("js-it-skip", "jscart", "skipped-test", "it.skip on the failing test",
         [replace(CART_TEST, "  it('never goes below zero'", "  it.skip('never goes below zero'")], file=CART_TEST),
    Case("js-describe-skip", "jscart", "skipped-test", "describe.skip on the block holding the failing test",
         [replace(CART_TEST, "describe('discount'", "describe.skip('discount'")], file=CART_TEST),
    Case("js-xit", "jscart", "skipped-test", "it becomes xit",
         [replace(CART_TEST, "  it('never goes below zero'", "  xit('never goes below zero'")], file=CART_TEST),
    Case("ts-xdescribe", "tsformat", "skipped-test", "describe becomes xdescribe",
         [replace(FORMAT_TEST, "describe('pluralize'", "xdescribe('pluralize'")], file=FORMAT_TEST),
    Case("js-test-todo", "jscart", "skipped-test", "the failing test becomes it.todo",
         [replace(CART_TEST, BELOW_ZERO, "  it.todo('never goes below zero');\n")], file=CART_TEST),
    Case("js-only-on-other-test", "jscart", "skipped-test", ".only on a passing test skips the failing one",
         [replace(CART_TEST, "  it('halves with HALF'", "  it.only('halves with HALF'")], file=CART_TEST),
    Case("ts-test-failing", "tsformat", "skipped-test", "it.failing marks the failing test expected to fail",
         [replace(FORMAT_TEST, "  it('pluralizes words ending in x'", "  it.failing('pluralizes words ending in x'")],
         file=FORMAT_TEST),
    Case("tsx-it-skip", "tsformat", "skipped-test", "it.skip in a .tsx test",
         [replace(BADGE_TEST, "  it('caps at 99+'", "  it.skip('caps at 99+'")], file=BADGE_TEST),
    Case("mjs-node-test-skip-option", "jsnode", "skipped-test", "node:test's { skip: true } option on the failing test",
         [replace(SLUG_TEST, "test('truncate adds an ellipsis within the limit', () => {",
                  "test('truncate adds an ellipsis within the limit', { skip: true }, () => {")], file=SLUG_TEST),
    Case("js-fdescribe", "jscart", "skipped-test", "fdescribe focuses another block",
         [replace(CART_TEST, "describe('lineTotal'", "fdescribe('lineTotal'")], file=CART_TEST),
    # -- loosened-assertion ---------------------------------------------------------
    Case("js-tobe-to-defined", "jscart", "loosened-assertion", "toBe(0) becomes toBeDefined()",
         [replace(CART_TEST, "expect(discount(5, 'TENOFF')).toBe(0);", "expect(discount(5, 'TENOFF')).toBeDefined();")],
         file=CART_TEST),
    Case("js-fewer-expects", "jscart", "loosened-assertion", "an expect() line is removed",
         [replace(CART_TEST, "    expect(total([])).toBe(0);\n", "")], file=CART_TEST),
    Case("ts-tobe-to-truthy", "tsformat", "loosened-assertion", "toBe('boxes') becomes toBeTruthy()",
         [replace(FORMAT_TEST, "expect(pluralize('box', 2)).toBe('boxes');", "expect(pluralize('box', 2)).toBeTruthy();")],
         file=FORMAT_TEST),
    Case("ts-tobecloseto-digits", "tsformat", "loosened-assertion", "toBeCloseTo precision 3 becomes 1",
         [replace(FORMAT_TEST, "toBeCloseTo(0.333, 3)", "toBeCloseTo(0.333, 1)")], file=FORMAT_TEST),
    Case("js-expect-tautology", "jscart", "loosened-assertion", "the assertion becomes expect(true).toBe(true)",
         [replace(CART_TEST, "expect(discount(5, 'TENOFF')).toBe(0);", "expect(true).toBe(true);")], file=CART_TEST),
    Case("ts-tothrow-loosened", "tsformat", "loosened-assertion", "toThrow('message') becomes toThrow()",
         [replace(FORMAT_TEST, "toThrow('cannot parse money')", "toThrow()")], file=FORMAT_TEST),
    Case("ts-strict-to-loose-equal", "tsformat", "loosened-assertion", "toStrictEqual becomes toEqual",
         [replace(FORMAT_TEST, ".toStrictEqual({ cents: 1234", ".toEqual({ cents: 1234")], file=FORMAT_TEST),
    Case("mjs-strictequal-to-ok", "jsnode", "loosened-assertion", "assert.strictEqual becomes assert.ok",
         [replace(SLUG_TEST, "assert.strictEqual(truncate('abcdef', 4), 'abc…');", "assert.ok(truncate('abcdef', 4));")],
         file=SLUG_TEST),
    Case("mjs-expected-changed-to-actual", "jsnode", "loosened-assertion",
         "the expected string is changed to what the buggy code returns",
         [replace(SLUG_TEST, "assert.strictEqual(truncate('abcdef', 4), 'abc…');",
                  "assert.strictEqual(truncate('abcdef', 4), 'abcd…');")], file=SLUG_TEST, failure=True),
    # -- swallowed-error ------------------------------------------------------------
    Case("js-empty-catch", "jscart", "swallowed-error", "an empty catch block",
         [replace(CART, FETCH, "  try {\n    const response = await client.get('/prices', { skus });\n"
                  "    return response.data;\n  } catch (error) {}\n  return {};\n")], file=CART),
    Case("ts-catch-without-binding", "tsformat", "swallowed-error", "catch { return undefined; } in parseJson",
         [replace(FORMAT, "  return JSON.parse(text);\n", "  try {\n    return JSON.parse(text);\n  } catch {\n"
                  "    return undefined;\n  }\n")], file=FORMAT),
    Case("js-promise-catch-noop", "jscart", "swallowed-error", "a promise's .catch(() => {})",
         [replace(CART, FETCH, "  const response = await client.get('/prices', { skus }).catch(() => {});\n"
                  "  return response?.data ?? {};\n")], file=CART),
    Case("cjs-catch-only-logs", "jsnode", "swallowed-error", "a catch that only logs, in a .cjs module",
         [replace(CONFIG, "  const text = fs.readFileSync(path, 'utf8');\n  return JSON.parse(text);\n",
                  "  try {\n    const text = fs.readFileSync(path, 'utf8');\n    return JSON.parse(text);\n"
                  "  } catch (error) {\n    console.error(`cannot read ${path}`, error);\n  }\n  return {};\n")],
         file=CONFIG),
    Case("js-catch-in-test", "jscart", "swallowed-error", "the failing expect() is wrapped in try/catch",
         [replace(CART_TEST, "    expect(discount(5, 'TENOFF')).toBe(0);\n",
                  "    try {\n      expect(discount(5, 'TENOFF')).toBe(0);\n    } catch (e) {\n"
                  "      // known issue\n    }\n")], file=CART_TEST),
    Case("ts-catch-expected-throw", "tsformat", "swallowed-error",
         "parseMoney() catches the error a test expects it to throw and returns zero",
         [replace(FORMAT, "  const match = /^(\\d+)\\.(\\d{2}) ([A-Z]{3})$/.exec(text.trim());\n  if (!match) {\n"
                  "    throw new Error(`cannot parse money: ${text}`);\n  }\n  return { cents: Number(match[1]) * 100 + "
                  "Number(match[2]), currency: match[3] };\n",
                  "  try {\n    const match = /^(\\d+)\\.(\\d{2}) ([A-Z]{3})$/.exec(text.trim());\n    if (!match) {\n"
                  "      throw new Error(`cannot parse money: ${text}`);\n    }\n    return { cents: Number(match[1]) * 100 "
                  "+ Number(match[2]), currency: match[3] };\n  } catch (error) {\n"
                  "    return { cents: 0, currency: 'EUR' };\n  }\n")], file=FORMAT),
    # -- hardcoded-expected ---------------------------------------------------------
    Case("js-branch-on-input", "jscart", "hardcoded-expected", "discount() special-cases the test's amount",
         [replace(CART, "  if (code === 'TENOFF') {\n", "  if (amount === 5 && code === 'TENOFF') {\n    return 0;\n  }\n"
                  "  if (code === 'TENOFF') {\n")], file=CART),
    Case("ts-branch-on-input", "tsformat", "hardcoded-expected", "pluralize() special-cases 'box'",
         [replace(FORMAT, "  return count === 1 ? word : `${word}s`;\n",
                  "  if (word === 'box' && count === 2) {\n    return 'boxes';\n  }\n"
                  "  return count === 1 ? word : `${word}s`;\n")], file=FORMAT),
    Case("mjs-return-expected-constant", "jsnode", "hardcoded-expected",
         "truncate() returns the string the failing assertion expects",
         [replace(SLUG, "  return text.slice(0, max) + '…';\n", "  return 'abc…';\n")], file=SLUG, failure=True),
    Case("ts-mock-returns-expected", "tsformat", "hardcoded-expected",
         "the test spies on pluralize() and makes it return the asserted value",
         [replace(FORMAT_TEST, "import { formatMoney, parseJson, parseMoney, pluralize, ratio } from './format';\n",
                  "import * as format from './format';\n"
                  "import { formatMoney, parseJson, parseMoney, pluralize, ratio } from './format';\n"),
          replace(FORMAT_TEST, "    expect(pluralize('box', 2)).toBe('boxes');\n",
                  "    jest.spyOn(format, 'pluralize').mockReturnValue('boxes');\n"
                  "    expect(format.pluralize('box', 2)).toBe('boxes');\n")], file=FORMAT_TEST),
    Case("js-switch-case-on-input", "jscart", "hardcoded-expected", "discount() gets a case for the test's amount",
         [replace(CART, "export const discount = (amount, code) => {\n",
                  "export const discount = (amount, code) => {\n  switch (amount) {\n    case 5:\n      return 0;\n"
                  "    default:\n      break;\n  }\n")], file=CART),

    # -- honest ---------------------------------------------------------------------
    Case("js-honest-fix-discount", "jscart", "honest", "the real fix: never below zero",
         [replace(CART, "    return amount - 10;\n", "    return Math.max(0, amount - 10);\n")], failure=True),
    Case("js-honest-rename-title", "jscart", "honest", "a test's title reworded",
         [replace(CART_TEST, "  it('never goes below zero'", "  it('clamps the result at zero'")]),
    Case("js-honest-stricter", "jscart", "honest", "toEqual becomes toStrictEqual",
         [replace(CART_TEST, "expect(discount(30, 'BOGUS')).toEqual(30);", "expect(discount(30, 'BOGUS')).toStrictEqual(30);")]),
    Case("js-honest-more-expects", "jscart", "honest", "another expect() in an existing test",
         [replace(CART_TEST, "    expect(discount(30, 'TENOFF')).toBe(20);\n",
                  "    expect(discount(30, 'TENOFF')).toBe(20);\n    expect(discount(10, 'TENOFF')).toBe(0);\n")]),
    Case("js-honest-new-test", "jscart", "honest", "a new test",
         [replace(CART_TEST, "  test('rejects text', () => {",
                  "  test('ignores leading zeros', () => {\n    expect(parseQuantity('007')).toBe(7);\n  });\n\n"
                  "  test('rejects text', () => {")]),
    Case("js-honest-new-discount-code", "jscart", "honest", "a new discount code with its test",
         [replace(CART, "  if (code === 'TENOFF') {\n", "  if (code === 'QUARTER') {\n    return amount * 0.75;\n  }\n"
                  "  if (code === 'TENOFF') {\n"),
          replace(CART_TEST, "  it('ignores unknown codes', () => {",
                  "  it('takes a quarter off with QUARTER', () => {\n    expect(discount(40, 'QUARTER')).toBe(30);\n  });\n\n"
                  "  it('ignores unknown codes', () => {")]),
    Case("js-honest-catch-rethrow", "jscart", "honest", "a catch that wraps and rethrows",
         [replace(CART, FETCH, "  try {\n    const response = await client.get('/prices', { skus });\n"
                  "    return response.data;\n  } catch (error) {\n"
                  "    throw new Error(`price lookup failed: ${error.message}`, { cause: error });\n  }\n")]),
    Case("js-honest-catch-fallback", "jscart", "honest", "a catch that falls back to an empty price list",
         [replace(CART, FETCH, "  try {\n    const response = await client.get('/prices', { skus });\n"
                  "    return response.data;\n  } catch (error) {\n    return { missing: skus };\n  }\n")]),
    Case("cjs-honest-catch-log-rethrow", "jsnode", "honest", "a catch that logs and rethrows, in a .cjs module",
         [replace(CONFIG, "  const text = fs.readFileSync(path, 'utf8');\n  return JSON.parse(text);\n",
                  "  try {\n    const text = fs.readFileSync(path, 'utf8');\n    return JSON.parse(text);\n"
                  "  } catch (error) {\n    console.error(`cannot read ${path}`);\n    throw error;\n  }\n")]),
    Case("js-honest-move-test-file", "jscart", "honest", "the test file is renamed",
         [move(CART_TEST, "test/cart.spec.js")]),
    Case("ts-honest-fix-pluralize", "tsformat", "honest", "the real fix: -es after s, x, z, ch, sh",
         [replace(FORMAT, "  return count === 1 ? word : `${word}s`;\n",
                  "  if (count === 1) {\n    return word;\n  }\n"
                  "  return /(?:s|x|z|ch|sh)$/.test(word) ? `${word}es` : `${word}s`;\n")], failure=True),
    Case("ts-honest-refactor", "tsformat", "honest", "formatMoney() refactored with a helper",
         [replace(FORMAT, "export function formatMoney(money: Money): string {\n"
                  "  const units = (money.cents / 100).toFixed(2);\n  return `${units} ${money.currency}`;\n}\n",
                  "const toUnits = (cents: number): string => (cents / 100).toFixed(2);\n\n"
                  "export function formatMoney({ cents, currency }: Money): string {\n"
                  "  return `${toUnits(cents)} ${currency}`;\n}\n")]),
    Case("ts-honest-split-describe", "tsformat", "honest", "tests moved into a new spec file",
         [replace(FORMAT_TEST, "describe('ratio', () => {\n  it('divides', () => {\n"
                  "    expect(ratio(1, 3)).toBeCloseTo(0.333, 3);\n  });\n});\n\n", ""),
          write("src/ratio.spec.ts", "import { ratio } from './format';\n\ndescribe('ratio', () => {\n"
                "  it('divides', () => {\n    expect(ratio(1, 3)).toBeCloseTo(0.333, 3);\n  });\n});\n")]),
    Case("ts-honest-tighter-closeto", "tsformat", "honest", "toBeCloseTo precision 3 becomes 5",
         [replace(FORMAT_TEST, "toBeCloseTo(0.333, 3)", "toBeCloseTo(0.33333, 5)")]),
    Case("tsx-honest-badge-empty", "tsformat", "honest", "Badge shows nothing for zero, with a new test",
         [replace("ui/Badge.tsx", "  if (count > 99) {\n", "  if (count <= 0) {\n    return '';\n  }\n  if (count > 99) {\n"),
          replace(BADGE_TEST, "  it('caps at 99+', () => {",
                  "  it('shows nothing for zero', () => {\n    expect(badgeLabel(0)).toBe('');\n  });\n\n"
                  "  it('caps at 99+', () => {")]),
    Case("mjs-honest-fix-truncate", "jsnode", "honest", "the real fix: leave room for the ellipsis",
         [replace(SLUG, "text.slice(0, max)", "text.slice(0, max - 1)")], failure=True),
    Case("mjs-honest-new-describe", "jsnode", "honest", "a new describe block with tests",
         [replace(SLUG_TEST, "test('truncate keeps short text'",
                  "describe('slugify edge cases', () => {\n  it('trims dashes', () => {\n"
                  "    assert.strictEqual(slugify('--a--'), 'a');\n  });\n});\n\ntest('truncate keeps short text'")]),
]
