const { test } = require('node:test');
const assert = require('node:assert');
const { port, readConfig } = require('../lib/config.cjs');

test('default port', () => {
  assert.strictEqual(port({}), 8080);
});

test('rejects a negative port', () => {
  assert.throws(() => port({ port: -1 }), RangeError);
});

test('readConfig fails on a missing file', () => {
  assert.throws(() => readConfig('/nonexistent/config.json'), /ENOENT/);
});
