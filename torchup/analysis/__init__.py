"""Stage 3: what the code means: names, scopes, evidence about values, what a rule sees and may ask."""
