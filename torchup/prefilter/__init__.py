"""Stage 2: reading less: trigger words (grep, then Python), the focus, the skeleton that is parsed."""
