"""Invoice arithmetic for the axpipe demo (shipped with a planted bug and a lint error)."""

import os
from decimal import ROUND_HALF_UP, Decimal


def line_total(quantity: int, unit_price: str) -> Decimal:
    """Price of one invoice line."""
    return Decimal(unit_price) * quantity


def invoice_total(lines: list[tuple[int, str]], tax_rate: str) -> Decimal:
    """Sum of the lines plus tax, rounded to cents."""
    subtotal = sum((line_total(quantity, price) for quantity, price in lines), Decimal("0"))
    tax = subtotal * Decimal(tax_rate)
    total = subtotal - tax
    return total.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
