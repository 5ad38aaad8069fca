import unittest
from decimal import Decimal

from invoices import invoice_total, line_total


class InvoiceTests(unittest.TestCase):
    def test_line_total(self):
        self.assertEqual(line_total(3, "2.50"), Decimal("7.50"))

    def test_invoice_total_adds_tax(self):
        self.assertEqual(invoice_total([(2, "10.00"), (1, "5.00")], "0.23"), Decimal("30.75"))

    def test_empty_invoice(self):
        self.assertEqual(invoice_total([], "0.23"), Decimal("0.00"))


if __name__ == "__main__":
    unittest.main()
