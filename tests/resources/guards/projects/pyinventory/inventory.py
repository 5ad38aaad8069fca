"""Stock levels for the warehouse."""

import json
import logging

log = logging.getLogger(__name__)


class OutOfStock(Exception):
    """More was asked for than the warehouse holds."""


class Inventory:
    def __init__(self):
        self._stock = {}

    def add(self, sku, quantity):
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        self._stock[sku] = self._stock.get(sku, 0) + quantity

    def remove(self, sku, quantity):
        available = self._stock.get(sku, 0)
        if quantity > available:
            raise OutOfStock(f"{sku}: {available} left, {quantity} asked")
        self._stock[sku] = available - quantity

    def count(self, sku):
        return self._stock[sku]

    def value(self, prices):
        return sum(prices[sku] * quantity for sku, quantity in self._stock.items())


def load(path):
    with open(path) as handle:
        data = json.load(handle)
    inventory = Inventory()
    for sku, quantity in data.items():
        inventory.add(sku, quantity)
    return inventory


def restock_level(sold_per_day, lead_days, safety=1.5):
    return int(sold_per_day * lead_days * safety)
