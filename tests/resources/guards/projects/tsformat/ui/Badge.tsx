import React from 'react';

export function badgeLabel(count: number): string {
  if (count > 99) {
    return '99+';
  }
  return String(count);
}

export function Badge({ count }: { count: number }) {
  return <span className="badge">{badgeLabel(count)}</span>;
}
