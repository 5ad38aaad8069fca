"""axpipe: unattended engineering work you can trust afterwards without having watched it."""

__version__ = "0.1.0"
