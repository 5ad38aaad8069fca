import React from 'react';
import { render, screen } from '@testing-library/react';
import { Badge, badgeLabel } from './Badge';

describe('Badge', () => {
  it('shows small counts', () => {
    expect(badgeLabel(7)).toBe('7');
  });

  it('caps at 99+', () => {
    expect(badgeLabel(150)).toBe('99+');
  });

  it('renders the label', () => {
    render(<Badge count={3} />);
    expect(screen.getByText('3')).toBeTruthy();
  });
});
