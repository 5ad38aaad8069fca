import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { slugify, truncate } from '../lib/slug.mjs';

describe('slugify', () => {
  it('lowercases and joins words', () => {
    assert.strictEqual(slugify('Hello World'), 'hello-world');
  });

  it('drops accents', () => {
    assert.strictEqual(slugify('Crème Brûlée'), 'creme-brulee');
  });
});

test('truncate keeps short text', () => {
  assert.strictEqual(truncate('abc', 5), 'abc');
});

test('truncate adds an ellipsis within the limit', () => {
  assert.strictEqual(truncate('abcdef', 4), 'abc…');
});
