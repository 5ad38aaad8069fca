"""Credit notes, migrated from export-v1 (not started)."""


def signed_cents(amount_cents: int) -> int:
    """The credit note's signed amount, in the legacy sign convention."""
    raise NotImplementedError("credit notes are not migrated yet")
