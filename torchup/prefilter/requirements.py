"""What a file must spell to refer to a qualified name at all, beyond the name's last word.

The pre-filter passes a file on any trigger word, and the last words of many qualified names are
common (`torch.distributed._tensor.zeros`, `torch.range`, `torch.onnx.export`, `functorch.grad`).
A reference the resolver can follow to such a name also spells the module it lives in:

- `a.b.mod.name`: every import form and attribute path names `mod`, after a dot or in a `from`
  import (`from a.b.mod import name`, `import a.b.mod as m`, `from a.b import mod`, `a.b.mod.name`,
  `from a.b.mod import *`);
- `pkg.name` for a package other than torch (`functorch.vmap`): `pkg`;
- `torch.name`, where `torch` is in every file: the name after a dot (`torch.range`, `th.range`),
  or in a `from ... import` statement; or any name at all after `from torch import *`.

So a rule whose findings come only from qualified names (``LooksFor.names``, and module words)
asks this before its file is parsed (``Rule.may_report``). Measured on torch 2.14.1's sources
(2,395 files), with the issue 21 catalogue on: cold check 5.0 s -> see bench/RESULTS.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class NameRequirements:
    """For a set of qualified names (and module words): can a text refer to one of them?"""

    names: tuple[str, ...]
    words: tuple[str, ...] = ()  # spelled anywhere is enough (modules a rule reports by import)

    @cached_property
    def _packages(self) -> frozenset[str]:
        """Top-level packages other than torch (`functorch`), and the rule's own module words."""
        found = set(self.words)
        for name in self.names:
            module = name.rpartition(".")[0]
            if module and "." not in module and module != "torch":
                found.add(module)
        return frozenset(found)

    @cached_property
    def _submodules(self) -> frozenset[str]:
        """The module a name lives in, when it is a submodule (`_tensor` of
        `torch.distributed._tensor`): spelled after a dot, or in a `from` import."""
        return frozenset(
            module.rpartition(".")[2] for module in (name.rpartition(".")[0] for name in self.names) if "." in module
        )

    @cached_property
    def _top_level(self) -> tuple[str, ...]:
        return tuple(sorted({name.rpartition(".")[2] for name in self.names if name.rpartition(".")[0] == "torch"}))

    @cached_property
    def _patterns(self) -> tuple[re.Pattern[str], ...]:
        """Each starts with a literal or a word the engine finds fast; an alternation of words
        tried at every position would cost more than the parse it saves."""
        patterns = [re.compile(rf"\b{re.escape(word)}\b") for word in sorted(self._packages)]
        dotted = "|".join(map(re.escape, sorted({*self._submodules, *self._top_level})))
        if dotted:
            patterns += [
                re.compile(rf"\.\s*(?:{dotted})\b"),
                re.compile(rf"from[ \t]+[\w.]+[ \t]+import[ \t]*(?:\([^)]*?|[^\n]*?)\b(?:{dotted})\b"),
            ]
        if self._top_level:
            patterns.append(re.compile(r"import\s*\*"))  # `from torch import *`: a bare name may be torch's
        return tuple(patterns)

    def could_refer(self, text: str | bytes) -> bool:
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")  # (patterns are ASCII: offsets do not matter here)
        if not any(word in text for word in (*self._packages, *self._submodules, *self._top_level)):
            return False  # (a substring test first: most files spell none of them at all)
        return any(pattern.search(text) for pattern in self._patterns)
