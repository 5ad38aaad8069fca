export interface Money {
  cents: number;
  currency: string;
}

export function formatMoney(money: Money): string {
  const units = (money.cents / 100).toFixed(2);
  return `${units} ${money.currency}`;
}

export function ratio(part: number, whole: number): number {
  return part / whole;
}

export function pluralize(word: string, count: number): string {
  return count === 1 ? word : `${word}s`;
}

export function parseMoney(text: string): Money {
  const match = /^(\d+)\.(\d{2}) ([A-Z]{3})$/.exec(text.trim());
  if (!match) {
    throw new Error(`cannot parse money: ${text}`);
  }
  return { cents: Number(match[1]) * 100 + Number(match[2]), currency: match[3] };
}

export function parseJson(text: string): unknown {
  return JSON.parse(text);
}
