"""An agent that ends the interpreter, with success, instead of returning an outcome."""

from __future__ import annotations

import sys
from typing import Any


class ExitsAgent:
    params_schema = None

    def run(self, request: Any) -> Any:
        sys.exit(0)
