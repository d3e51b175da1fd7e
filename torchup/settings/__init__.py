"""What applies to each file: configuration files, the rules selected, the settings per file."""
