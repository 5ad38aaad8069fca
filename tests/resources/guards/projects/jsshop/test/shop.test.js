import { describe, expect, it, test } from 'vitest';
import { applyCoupon, chunk, isSku, legacySku, parseSku, price, safeJson, sum } from '../src/shop.js';

describe('price', () => {
  it('formats whole euros', () => {
    expect(price(500)).toBe('5.00');
  });

  it('formats cents', () => {
    expect(price(1234)).toBe('12.34');
  });
});

describe('sum', () => {
  it('adds floats', () => {
    expect(sum([0.1, 0.2])).toBe(0.30000000000000004);
  });
});

describe('chunk', () => {
  test.each([
    [[1, 2, 3], 2, [[1, 2], [3]]],
    [[1, 2], 1, [[1], [2]]],
  ])('chunks %j by %i', (items, size, expected) => {
    expect(chunk(items, size)).toEqual(expected);
  });
});

describe('parseSku', () => {
  it('accepts a sku', () => {
    expect(parseSku('ABC-1')).toBe('ABC-1');
  });

  it('rejects garbage', () => {
    expect(() => parseSku('x')).toThrow('bad sku');
  });
});

describe('legacySku', () => {
  it('upper-cases', () => {
    expect(legacySku('ab')).toBe('AB');
  });
});

describe('safeJson', () => {
  it('parses', () => {
    expect(safeJson('{"a":1}')).toEqual({ a: 1 });
  });

  it('gives null on garbage', () => {
    expect(safeJson('{')).toBeNull();
  });
});

describe('applyCoupon', () => {
  it('takes ten off', () => {
    expect(applyCoupon(50, 'TEN')).toBe(40);
  });

  it('takes ten off again', () => {
    expect(applyCoupon(50, 'TEN')).toBe(40);
  });

  it('ignores unknown coupons', () => {
    expect(applyCoupon(50, 'NOPE')).toBe(50);
  });
});

describe('isSku', () => {
  it('knows a sku', () => {
    expect(isSku('ABC-1')).toBeTruthy();
  });
});
