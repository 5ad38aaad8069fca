"""Payments, migrated from export-v1 (in progress)."""

from decimal import ROUND_HALF_UP, Decimal

# The export's fixed conversion rates to EUR.
RATES = {"EUR": Decimal("1"), "USD": Decimal("0.92"), "GBP": Decimal("1.17")}


def eur_cents(amount_cents: int, currency: str) -> int:
    """The payment in EUR cents."""
    converted = Decimal(amount_cents) * RATES[currency]
    return int(converted.quantize(Decimal("1"), rounding=ROUND_HALF_UP))
