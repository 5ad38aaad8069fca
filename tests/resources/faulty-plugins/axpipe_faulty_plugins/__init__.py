"""Plugins that import fine and then break axpipe's plugin contract when called."""
