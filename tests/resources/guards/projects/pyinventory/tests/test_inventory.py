import json
import unittest

from inventory import Inventory, OutOfStock, load, restock_level


class InventoryTest(unittest.TestCase):
    def setUp(self):
        self.inventory = Inventory()
        self.inventory.add("apple", 10)

    def test_add_accumulates(self):
        self.inventory.add("apple", 5)
        self.assertEqual(self.inventory.count("apple"), 15)

    def test_add_rejects_zero(self):
        with self.assertRaises(ValueError):
            self.inventory.add("apple", 0)

    def test_remove(self):
        self.inventory.remove("apple", 4)
        self.assertEqual(self.inventory.count("apple"), 6)

    def test_remove_too_many(self):
        self.assertRaises(OutOfStock, self.inventory.remove, "apple", 11)

    def test_count_unknown_sku(self):
        self.assertEqual(self.inventory.count("pear"), 0)

    def test_value(self):
        self.assertAlmostEqual(self.inventory.value({"apple": 0.35}), 3.5, places=6)


class LoadTest(unittest.TestCase):
    def test_load_rejects_bad_json(self):
        with open("bad.json", "w") as handle:
            handle.write("{not json")
        with self.assertRaises(json.JSONDecodeError):
            load("bad.json")


class RestockTest(unittest.TestCase):
    def test_restock_level(self):
        self.assertEqual(restock_level(4, 3), 18)

    def test_restock_is_int(self):
        self.assertIsInstance(restock_level(1, 1), int)


if __name__ == "__main__":
    unittest.main()
