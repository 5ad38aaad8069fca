const fs = require('node:fs');

function readConfig(path) {
  const text = fs.readFileSync(path, 'utf8');
  return JSON.parse(text);
}

function port(config) {
  const value = Number(config.port ?? 8080);
  if (!Number.isInteger(value) || value <= 0) {
    throw new RangeError(`invalid port: ${config.port}`);
  }
  return value;
}

module.exports = { readConfig, port };
