"""A run over many files: workers, the project pass, notebooks, the findings cache, replays."""
