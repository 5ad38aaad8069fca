import pytest

from calc import add, divide, factorial, mean, parse_amount, percent


def test_add():
    assert add(2, 3) == 5


def test_add_negative():
    assert add(-2, -3) == -5


def test_divide():
    assert divide(1, 4) == pytest.approx(0.25)


def test_divide_by_zero():
    with pytest.raises(ZeroDivisionError, match="divide by zero"):
        divide(1, 0)


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5


def test_mean_of_nothing():
    with pytest.raises(ValueError):
        mean([])


@pytest.mark.parametrize(("n", "expected"), [(0, 1), (1, 1), (5, 120), (7, 5040)])
def test_factorial(n, expected):
    assert factorial(n) == expected


def test_parse_amount():
    assert parse_amount("12.50 EUR") == 12.5
    assert parse_amount(" 3 USD ") == 3.0


def test_parse_amount_rejects_unknown_currency():
    with pytest.raises(ValueError, match="unknown currency"):
        parse_amount("5 GBP")


def test_percent():
    assert percent(1, 3) == 33.3


class TestRounding:
    def test_percent_rounds_to_one_place(self):
        assert percent(2, 3) == 66.7

    def test_percent_of_whole(self):
        assert percent(5, 5) == 100.0
