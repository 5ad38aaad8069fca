import sys

import pytest

from shop import apply_discount, batches, gross, legacy_code, net, old_total, read_price, safe_ratio, total


def test_net():
    assert net(120) == 100


def test_gross():
    assert gross(100) == 120.0


def test_discount_ten():
    assert apply_discount(200, 10) == 180


def test_discount_half():
    assert apply_discount(200, 50) == 100


def test_discount_out_of_range():
    with pytest.raises(ValueError) as error:
        apply_discount(10, 120)
    assert "out of range" in str(error.value)


def test_old_total_warns():
    with pytest.warns(DeprecationWarning):
        result = old_total([1, 2])
    assert result == 3


def test_total():
    assert total([1, 2, 3]) == 6


def test_total_again():
    assert total([1, 2, 3]) == 6


def test_batches():
    result = list(batches([1, 2, 3, 4, 5], 2))
    assert result[0] == [1, 2]
    assert result[1] == [3, 4]
    assert result[2] == [5]


def test_read_price():
    assert read_price("2.5") == 2.5
    assert read_price("x") is None


def test_safe_ratio():
    assert safe_ratio(1, 4) == 0.25


def test_float_total():
    assert total([0.1, 0.2]) == 0.30000000000000004


def test_legacy_code():
    assert legacy_code("ab") == "AB"


@pytest.mark.skipif(sys.platform == "win32", reason="paths differ on Windows")
def test_platform_path():
    assert "/".join(["a", "b"]) == "a/b"


@pytest.mark.xfail(sys.version_info < (3, 8), reason="needs the walrus operator")
def test_walrus():
    assert (count := 3) == 3
