"""Invoices, migrated from export-v1 (accepted)."""

from decimal import ROUND_HALF_UP, Decimal


def total_cents(net_cents: int, tax_rate: str) -> int:
    """Net plus tax, rounded half up to the cent, as the legacy system did."""
    total = Decimal(net_cents) * (1 + Decimal(tax_rate))
    return int(total.quantize(Decimal("1"), rounding=ROUND_HALF_UP))
