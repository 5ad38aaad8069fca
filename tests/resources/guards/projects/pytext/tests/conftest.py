import pytest


@pytest.fixture
def sample_text():
    return "The quick brown fox"
