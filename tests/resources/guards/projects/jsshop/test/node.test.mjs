import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSku, price } from '../src/shop.js';

test('price pads', () => {
  assert.equal(price(5), '0.05');
});

test('parseSku throws', () => {
  assert.throws(() => parseSku('x'), /bad sku/);
});
