"""A plugin module that ends the interpreter when it is imported (sys.exit at import time)."""

import sys

sys.exit(3)
