"""Fails on import, as a guard with a missing dependency would."""

import axpipe_guard_dependency_that_is_not_installed  # noqa: F401
