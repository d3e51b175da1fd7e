"""The command line: arguments, configuration, settings per file, sub-commands."""
