import { describe, expect, it, test, vi } from 'vitest';
import { discount, fetchPrices, lineTotal, parseQuantity, total } from '../src/cart.js';

describe('lineTotal', () => {
  it('multiplies price by quantity', () => {
    expect(lineTotal({ price: 2.5, qty: 4 })).toBe(10);
  });
});

describe('total', () => {
  it('sums every line', () => {
    expect(total([{ price: 2, qty: 3 }, { price: 1, qty: 1 }])).toBe(7);
    expect(total([])).toBe(0);
  });
});

describe('discount', () => {
  it('halves with HALF', () => {
    expect(discount(30, 'HALF')).toBe(15);
  });

  it('takes ten off with TENOFF', () => {
    expect(discount(30, 'TENOFF')).toBe(20);
  });

  it('never goes below zero', () => {
    expect(discount(5, 'TENOFF')).toBe(0);
  });

  it('ignores unknown codes', () => {
    expect(discount(30, 'BOGUS')).toEqual(30);
  });
});

describe('parseQuantity', () => {
  test('reads integers', () => {
    expect(parseQuantity('12')).toBe(12);
  });

  test('rejects text', () => {
    expect(() => parseQuantity('twelve')).toThrow(TypeError);
  });
});

describe('fetchPrices', () => {
  it('returns the data of the response', async () => {
    const client = { get: vi.fn().mockResolvedValue({ data: { A1: 3 } }) };
    await expect(fetchPrices(client, ['A1'])).resolves.toEqual({ A1: 3 });
  });
});
