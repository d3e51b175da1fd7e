"""Stage 6: findings shown: the terminal, JSON, SARIF, GitHub, JUnit, statistics."""
