"""A small shop: prices with tax, discounts, stock, batches of orders."""

import warnings
from contextlib import suppress

try:
    import tomllib
except ImportError:  # Python < 3.11: settings files are not read
    tomllib = None

TAX = 0.2


def net(gross_price):
    return round(gross_price / (1 + TAX), 2)


def gross(net_price):
    return round(net_price * (1 + TAX), 2)


def apply_discount(price, percent):
    if not 0 <= percent <= 100:
        raise ValueError(f"discount out of range: {percent}")
    return price * (100 - percent) / 100


def total(prices):
    return sum(prices)


def old_total(prices):
    warnings.warn("old_total is deprecated, use total", DeprecationWarning, stacklevel=2)
    return total(prices)


def batches(items, size):
    iterator = iter(items)
    while True:
        batch = []
        with suppress(StopIteration):
            for _ in range(size):
                batch.append(next(iterator))
        if not batch:
            return
        yield batch


def read_price(text):
    try:
        return float(text)
    except ValueError:
        return None


def safe_ratio(part, whole):
    try:
        return part / whole
    except ZeroDivisionError:
        pass
    return 0.0


def legacy_code(sku):
    return sku.upper()


def settings(text):
    if tomllib is None:
        return {}
    return tomllib.loads(text)


class Stock:
    def __init__(self):
        self.items = {}

    def put(self, sku, count):
        self.items[sku] = self.items.get(sku, 0) + count

    def take(self, sku, count):
        if self.items.get(sku, 0) < count:
            raise KeyError(sku)
        self.items[sku] -= count

    def level(self, sku):
        return self.items.get(sku, 0)
