export function price(cents) {
  return (cents / 100).toFixed(2);
}

export function sum(values) {
  return values.reduce((total, value) => total + value, 0);
}

export function applyCoupon(total, coupon) {
  if (coupon === 'TEN') {
    return total - 10;
  }
  return total;
}

export function chunk(items, size) {
  const chunks = [];
  for (let index = 0; index < items.length; index += size) {
    chunks.push(items.slice(index, index + size));
  }
  return chunks;
}

export function parseSku(text) {
  if (!/^[A-Z]{3}-\d+$/.test(text)) {
    throw new Error(`bad sku: ${text}`);
  }
  return text;
}

export function legacySku(text) {
  return text.toUpperCase();
}

export function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export function isSku(text) {
  return /^[A-Z]{3}-\d+$/.test(text);
}
