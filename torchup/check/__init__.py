"""Stage 4: one file checked: pre-filter, parse, resolve, run the rules, apply `# noqa`."""
