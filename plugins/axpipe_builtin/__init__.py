"""axpipe's first-party plugins, registered through entry points like any third party's."""
