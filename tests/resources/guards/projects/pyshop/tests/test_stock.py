import unittest

from shop import Stock


class StockTest(unittest.TestCase):
    def setUp(self):
        self.stock = Stock()
        self.stock.put("pen", 3)

    def test_put(self):
        self.stock.put("pen", 2)
        self.assertEqual(self.stock.level("pen"), 5)

    def test_take(self):
        self.stock.take("pen", 1)
        self.assertTrue(self.stock.level("pen") == 2)

    def test_take_too_many(self):
        with self.assertRaises(KeyError):
            self.stock.take("pen", 9)

    def test_level_unknown(self):
        self.assertEqual(self.stock.level("ink"), 0)


if __name__ == "__main__":
    unittest.main()
