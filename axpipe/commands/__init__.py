"""One module per subcommand; each function takes explicit arguments and returns an exit code."""
