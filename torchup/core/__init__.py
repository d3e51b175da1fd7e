"""What every stage shares: findings and edits, source texts, release facts, target Pythons, the lexer."""
