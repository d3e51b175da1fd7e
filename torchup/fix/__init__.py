"""Stage 5: edits applied, re-checked, verified safe."""
