"""Stage 1: which files a run reads (walking, excludes, .gitignore, links)."""
