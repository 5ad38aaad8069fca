import { formatMoney, parseJson, parseMoney, pluralize, ratio } from './format';

describe('formatMoney', () => {
  it('formats cents', () => {
    expect(formatMoney({ cents: 1234, currency: 'EUR' })).toBe('12.34 EUR');
  });

  it('pads to two places', () => {
    expect(formatMoney({ cents: 500, currency: 'USD' })).toBe('5.00 USD');
  });
});

describe('ratio', () => {
  it('divides', () => {
    expect(ratio(1, 3)).toBeCloseTo(0.333, 3);
  });
});

describe('pluralize', () => {
  it('keeps one', () => {
    expect(pluralize('box', 1)).toBe('box');
  });

  it('pluralizes words ending in x', () => {
    expect(pluralize('box', 2)).toBe('boxes');
  });

  it.each([
    ['cat', 2, 'cats'],
    ['dog', 3, 'dogs'],
    ['box', 3, 'boxes'],
  ])('pluralizes %s', (word, count, plural) => {
    expect(pluralize(word, count)).toBe(plural);
  });
});

describe('parseMoney', () => {
  it('reads an amount', () => {
    expect(parseMoney('12.34 EUR')).toStrictEqual({ cents: 1234, currency: 'EUR' });
  });

  it('rejects garbage', () => {
    expect(() => parseMoney('twelve')).toThrow('cannot parse money');
  });
});

describe('parseJson', () => {
  it('throws on invalid JSON', () => {
    expect(() => parseJson('{')).toThrow(SyntaxError);
  });
});
