export function lineTotal(item) {
  return item.price * item.qty;
}

export function total(items) {
  return items.reduce((sum, item) => sum + lineTotal(item), 0);
}

export const discount = (amount, code) => {
  if (code === 'HALF') {
    return amount / 2;
  }
  if (code === 'TENOFF') {
    return amount - 10;
  }
  return amount;
};

export function parseQuantity(text) {
  const value = Number.parseInt(text, 10);
  if (Number.isNaN(value)) {
    throw new TypeError(`not a quantity: ${text}`);
  }
  return value;
}

export async function fetchPrices(client, skus) {
  const response = await client.get('/prices', { skus });
  return response.data;
}
