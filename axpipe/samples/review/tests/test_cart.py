import unittest

from shop.cart import cart_total, line_total


class CartTest(unittest.TestCase):
    def test_line_total(self):
        self.assertEqual(line_total(250, 3), 750)

    def test_negative_quantity_is_refused(self):
        with self.assertRaises(ValueError):
            line_total(100, -1)

    def test_discount_rounds_half_up(self):
        self.assertEqual(cart_total([(333, 1)], discount_percent=50), 167)


if __name__ == "__main__":
    unittest.main()
