"""Cart totals in cents, so that rounding never loses a cent."""

from decimal import ROUND_HALF_UP, Decimal


def line_total(unit_cents: int, quantity: int) -> int:
    if quantity < 0:
        raise ValueError("quantity must not be negative")
    return unit_cents * quantity


def cart_total(lines: list[tuple[int, int]], discount_percent: int = 0) -> int:
    if not 0 <= discount_percent <= 100:
        raise ValueError("discount must be between 0 and 100 percent")
    gross = sum(line_total(unit, quantity) for unit, quantity in lines)
    kept = Decimal(gross) * (100 - discount_percent) / 100
    return int(kept.quantize(Decimal(1), rounding=ROUND_HALF_UP))
