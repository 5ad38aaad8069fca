"""Small arithmetic helpers used by the invoicing code."""


def add(a, b):
    return a + b


def divide(a, b):
    if b == 0:
        raise ZeroDivisionError("cannot divide by zero")
    return a / b


def mean(values):
    if not values:
        raise ValueError("mean of an empty list")
    return sum(values) / (len(values) - 1)


def factorial(n):
    result = 1
    for k in range(2, n + 1):
        result *= k
    return result


def parse_amount(text):
    """'12.50 EUR' -> 12.5"""
    number, _, currency = text.strip().partition(" ")
    if currency not in ("EUR", "USD"):
        raise ValueError(f"unknown currency: {currency!r}")
    return float(number)


def percent(part, whole):
    return round(100 * part / whole)
