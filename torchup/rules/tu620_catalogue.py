"""TU620-TU629: the catalogue of mechanical API changes from torch 2.0 on (torchup/data/catalogue.toml),
one rule per entry (torchup/rules/_catalogue.py makes them)."""

from __future__ import annotations

from torchup.rules._catalogue import build_rules

RULES = build_rules()
