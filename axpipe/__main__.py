"""``python -m axpipe``."""

import sys

from axpipe.cli import main

sys.exit(main())
