"""Property-based tests of the fixer: random programs with rule targets in random syntactic places.

Each generated program is a header of imports, a marker comment, then a body built from
*segments*: context text (which no fix may touch) and rule targets (``torch.cholesky(A, True)``,
``torch.qr(A, some=s)``, ``x.cholesky()``, profiler ``use_cuda=``,
``LinearCrossEntropyOptions(acc_policy="balanced")``, ``torch.compile(f, shapes_spec=s)``, ...),
nested inside one another and inside calls, decorators, lambdas, comprehensions, f-strings, walrus
expressions, ``match`` statements, backslash continuations, argument lists with comments, odd
whitespace, tabs, non-ASCII identifiers, and LF / CRLF / CR / mixed line endings. Properties:

- the fixed text compiles;
- outside the targets nothing changes: the body still matches the context segments in order, with
  any text in place of each target, and the header changed at most by whole import lines added or
  ``from`` imports shrunk or dropped; every comment survives;
- fixing the fixed text again changes nothing;
- code without findings (including near misses such as ``torch.linalg.cholesky`` or ``"torch.qr"``
  in a string) is returned untouched;
- no fix was rejected by the fixer's own safety nets (a note asking to report a bug).

How many examples: the hypothesis profile named by ``TORCHUP_HYPOTHESIS_PROFILE``:

- ``ci`` (default): 200 examples per test, well under a minute for the module;
- ``thorough``: 20000 examples per test, for a local soak, e.g.
  ``TORCHUP_HYPOTHESIS_PROFILE=thorough python3 -m pytest -q tests/test_properties.py``
  (add ``-p no:cacheprovider --hypothesis-show-statistics`` to see what was generated);
- ``smoke``: 20 examples, to check that the generators still work.
"""

from __future__ import annotations

import ast
import collections
import difflib
import io
import os
import re
import tokenize
import warnings
from dataclasses import dataclass, field, replace

from hypothesis import HealthCheck, assume, event, example, given, settings
from hypothesis import strategies as st

import torchup
from torchup.core.diagnostics import Applicability

_COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "print_blob": True,
}
settings.register_profile("ci", max_examples=200, derandomize=True, **_COMMON)  # the same examples on every CI run
settings.register_profile("thorough", max_examples=20000, **_COMMON)
settings.register_profile("smoke", max_examples=20, **_COMMON)
SETTINGS = settings.get_profile(os.environ.get("TORCHUP_HYPOTHESIS_PROFILE", "ci"))

MARKER = "# <<body>>\n"  # the first body line; the importer inserts before it, never after


# -- programs as segments ----------------------------------------------------------------------


@dataclass
class Code:
    """Text made of context (must survive) and targets (a fix may rewrite them)."""

    parts: list[tuple[bool, str]] = field(default_factory=list)  # (is_target, text)

    @classmethod
    def ctx(cls, text: str) -> Code:
        return cls([(False, text)])

    @classmethod
    def target(cls, text: str) -> Code:
        return cls([(True, text)])

    def __add__(self, other: Code | str) -> Code:
        other = Code.ctx(other) if isinstance(other, str) else other
        return Code(self.parts + other.parts)

    def __radd__(self, other: str) -> Code:
        return Code.ctx(other) + self

    @property
    def text(self) -> str:
        return "".join(text for _, text in self.parts)

    @property
    def has_target(self) -> bool:
        return any(is_target for is_target, _ in self.parts)

    def as_target(self) -> Code:
        """The whole text as one target (a target whose arguments hold further targets)."""
        return Code.target(self.text)

    def map_text(self, change) -> Code:
        return Code([(is_target, change(text)) for is_target, text in self.parts])


def join(pieces: list[Code | str]) -> Code:
    out = Code()
    for piece in pieces:
        out = out + piece
    return out


@dataclass(frozen=True)
class Env:
    """What the current position allows."""

    torch: str  # the name torch is bound to
    from_names: frozenset[str]  # names imported from torch modules in the header
    inline: bool = False  # inside an f-string replacement field: one line, no comment, no backslash
    banned_quote: str = ""  # the quote of the enclosing f-string
    bracketed: bool = False  # inside (), [] or {}: newlines and comments may separate tokens
    no_walrus: bool = False  # inside a comprehension's iterable

    def quote(self, draw) -> str:
        options = [q for q in ('"', "'") if q != self.banned_quote]
        return draw(st.sampled_from(options))


NAMES = ["A", "B", "x", "M", "données", "Ä", "矩阵", "ΔA", "ñ_1", "_tmp", "self_x"]
NON_ASCII_COMMENTS = ["# note", "# résumé ✓", "# 日本語のコメント", "#", "#  (", "# ) ] }", "# torch.qr(A)"]


@st.composite
def separator(draw, env: Env) -> str:
    """What goes after a comma in an argument list."""
    options = [", ", ",", " , ", ",\t", ",  "]
    if not env.inline:
        options += [",\\\n", ", \\\n    "]
        if env.bracketed:
            options += [",\n    ", ",\n", ",\n\t\t", ",\r\n  "]
            options += [f",  {c}\n    " for c in NON_ASCII_COMMENTS]
    return draw(st.sampled_from(options))


@st.composite
def open_paren(draw, env: Env) -> tuple[str, str]:
    """Padding after ``(`` and before ``)`` (given that the inside is bracketed)."""
    options = [("", ""), (" ", " "), ("\t", "")]
    if not env.inline:
        options += [("\n    ", "\n"), ("  # open ⟨\n", "\n"), ("\\\n", ""), ("", "  # close\n")]
    return draw(st.sampled_from(options))


@st.composite
def dotted(draw, env: Env, parts: list[str]) -> str:
    """``a.b.c`` with optional odd spacing around the dots (a continuation needs a bracket or ``\\``)."""
    dots = [".", " . ", ".\t"]
    if not env.inline:
        dots.append(".\\\n")
    return "".join(part + (draw(st.sampled_from(dots)) if i < len(parts) - 1 else "") for i, part in enumerate(parts))


@st.composite
def call(draw, env: Env, callee: str, args: list[Code | str]) -> Code:
    """``callee(arg, arg, ...)`` with random layout: separators, comments, a trailing comma."""
    inner = bracketed(env)
    before, after = draw(open_paren(inner))
    space = draw(st.sampled_from(["", "", " "])) if not env.inline else ""
    pieces: list[Code | str] = [callee + space + "(" + before]
    for index, arg in enumerate(args):
        if index:
            pieces.append(draw(separator(inner)))
        pieces.append(arg)
    if args and not env.inline and draw(st.booleans()):
        pieces.append(draw(st.sampled_from([",", ", ", ",  # trailing\n", ",\n"])))
    pieces.append(after + ")")
    return join(pieces)


def bracketed(env: Env) -> Env:
    return replace(env, bracketed=True)


# -- atoms and targets -------------------------------------------------------------------------


@st.composite
def atom(draw, env: Env) -> Code:
    kind = draw(st.sampled_from(["name", "name", "number", "string", "attribute", "call"]))
    if kind == "name":
        return Code.ctx(draw(st.sampled_from(NAMES)))
    if kind == "number":
        return Code.ctx(draw(st.sampled_from(["0", "1", "2.5", "1_000", "0x1F", "1e-3", "3j"])))
    if kind == "string":
        q = env.quote(draw)
        return Code.ctx(draw(st.sampled_from(["{q}été{q}", "{q}torch.qr(A){q}", "b{q}x{q}", "{q}{q}"])).format(q=q))
    if kind == "attribute":
        return Code.ctx(draw(dotted(env, [draw(st.sampled_from(NAMES)), "T"])))
    return Code.ctx(draw(st.sampled_from(["f(x)", "g()", "h(A, 1)"])))


def fn_name(draw, env: Env, name: str, module: str = "") -> str:
    """``torch.name`` (through the header's alias), ``name`` when imported from torch, or odd spacing."""
    if name in env.from_names and draw(st.booleans()):
        return name
    path = [env.torch, *module.split(".")] if module else [env.torch]
    return draw(dotted(env, [*path, name]))


@st.composite
def boolish(draw, env: Env, depth: int) -> Code:
    options = ["True", "False", "flag", "not flag", "x is None", "1", "0"]
    if depth > 0 and draw(st.integers(0, 3)) == 0:
        return draw(expression(env, depth - 1))
    return Code.ctx(draw(st.sampled_from(options)))


@st.composite
def receiver(draw, env: Env, depth: int) -> Code:
    """The object of a Tensor method call: a primary, or a parenthesized expression."""
    if depth > 0 and draw(st.integers(0, 2)) == 0:
        inner = draw(expression(bracketed(env), depth - 1))
        return "(" + inner + ")"
    primary = draw(atom(env))
    return "(" + primary + ")" if primary.text[0].isdigit() else primary


@st.composite
def target(draw, env: Env, depth: int) -> Code:
    """One rule target; its arguments may hold further targets."""
    sub = bracketed(env)

    def arg() -> Code:
        return draw(expression(sub, depth - 1)) if depth > 0 else draw(atom(sub))

    kind = draw(st.sampled_from(
        ["cholesky", "qr", "tensor_cholesky", "tensor_qr", "profiler", "acc_policy", "compile"]
    ))
    if kind == "cholesky":
        extra = draw(st.sampled_from([[], ["True"], ["False"], ["upper=True"], ["upper=flag"], ["flag"], ["out=o"]]))
        code = draw(call(env, fn_name(draw, env, "cholesky"), [arg(), *extra]))
    elif kind == "qr":
        extra = draw(st.sampled_from([[], ["some=s"], ["some=True"], ["some=False"], ["False"], ["s"]]))
        if extra and extra[0] in ("some=s", "s") and depth > 0 and draw(st.booleans()):
            extra = [("some=" if extra[0].startswith("some") else "") + draw(boolish(sub, depth - 1))]
        code = draw(call(env, fn_name(draw, env, "qr"), [arg(), *extra]))
    elif kind in ("tensor_cholesky", "tensor_qr"):
        method = "cholesky" if kind == "tensor_cholesky" else "qr"
        extra = draw(st.sampled_from([[], [], ["True"], ["upper=True"]] if method == "cholesky" else [[], ["False"]]))
        obj = draw(receiver(env, depth))
        dot = draw(st.sampled_from([".", " .", ". "] if env.inline else [".", " .", ". ", ".\\\n"]))
        code = obj + dot + method + draw(call(env, "", extra))
    elif kind == "profiler":
        module = draw(st.sampled_from(["profiler", "autograd.profiler"]))
        if module == "profiler" and "profiler" in env.from_names and draw(st.booleans()):
            callee = draw(dotted(env, ["profiler", "profile"]))
        else:
            callee = fn_name(draw, env, "profile", module)
        value = draw(boolish(sub, depth))
        others = draw(st.sampled_from([[], ["record_shapes=True"], ["enabled=flag"], ["with_stack=True"]]))
        if module == "profiler" and draw(st.integers(0, 3)) == 0:
            others = [*others, f"activities=[{env.torch}.profiler.ProfilerActivity.CPU]"]
        arguments: list[Code | str] = [*others, "use_cuda=" + value]
        arguments = draw(st.permutations(arguments))
        code = draw(call(env, callee, list(arguments)))
    elif kind == "acc_policy":
        if "LinearCrossEntropyOptions" in env.from_names and draw(st.booleans()):
            callee = "LinearCrossEntropyOptions"
        else:
            callee = fn_name(draw, env, "LinearCrossEntropyOptions", "nn")
        q = env.quote(draw)
        arguments = [f"acc_policy={q}balanced{q}"]
        if draw(st.booleans()):
            arguments.insert(0, "chunk_size=" + draw(atom(sub)).text)
        code = draw(call(env, callee, arguments))
    else:
        function = arg()
        value = draw(st.sampled_from(["s", "None", "{0: 1}", "[s]"])) if not env.inline else "s"
        others = draw(st.sampled_from([[], ["fullgraph=True"], ["mode=None"]]))
        code = draw(call(env, fn_name(draw, env, "compile"), [function, *others, "shapes_spec=" + value]))
    return code.as_target()


# -- expressions and statements ----------------------------------------------------------------


@st.composite
def expression(draw, env: Env, depth: int) -> Code:
    """An expression that may contain targets, in one of many syntactic contexts."""
    if depth <= 0:
        return draw(st.one_of(atom(env), target(env, 0)))
    kind = draw(st.sampled_from([
        "atom", "target", "target", "target", "call", "kwarg", "star", "binary", "unary", "subscript", "slice",
        "attribute", "tuple", "list", "dict", "set", "lambda", "listcomp", "genexp", "dictcomp", "walrus",
        "ifexp", "fstring", "await_free_paren", "compare",
    ]))
    sub = bracketed(env)

    def e(environment: Env = sub) -> Code:
        return draw(expression(environment, depth - 1))

    if kind == "atom":
        return draw(atom(env))
    if kind == "target":
        return draw(target(env, depth - 1))
    if kind == "call":
        return draw(call(env, draw(st.sampled_from(["f", "g.h", "données", "print"])), [e(), e()][: draw(st.integers(1, 2))]))
    if kind == "kwarg":
        return draw(call(env, "f", ["k=" + e()]))
    if kind == "star":
        return draw(call(env, "f", ["*" + e(), "**" + e()][: draw(st.integers(1, 2))]))
    if kind == "binary":
        op = draw(st.sampled_from([" + ", "@", " * ", " - ", " and ", " or ", " | ", "**"]))
        return "(" + e() + op + e() + ")"
    if kind == "unary":
        return draw(st.sampled_from(["-", "not ", "~", "+"])) + "(" + e() + ")"
    if kind == "subscript":
        return "M[" + e() + "]"
    if kind == "slice":
        return "M[" + e() + ":" + e() + ", ...]"
    if kind == "attribute":
        return "(" + e() + ")" + draw(st.sampled_from([".T", ".shape[0]", ".sum()"]))
    if kind == "tuple":
        return "(" + e() + draw(separator(sub)) + e() + ")"
    if kind == "list":
        return "[" + e() + draw(separator(sub)) + e() + "]"
    if kind == "dict":
        q = env.quote(draw)
        return "{" + q + "k" + q + ": " + e() + draw(separator(sub)) + e() + ": 1}"
    if kind == "set":
        return "{" + e() + "}"
    if kind == "lambda":
        params = draw(st.sampled_from(["", "A", "A, flag=True", "*a, **k", "données"]))
        return "(lambda " + params + ": " + e() + ")"
    if kind == "listcomp":  # (an assignment expression may not appear in the iterable)
        return "[" + e() + " for A in " + e(replace(sub, no_walrus=True)) + " if " + e() + "]"
    if kind == "genexp":
        return "(" + e() + " for _ in range(2))"
    if kind == "dictcomp":
        return "{k: " + e() + " for k in ks}"
    if kind == "walrus" and not env.no_walrus:
        name = draw(st.sampled_from(["w", "données", "L"]))
        return "(" + name + " := " + e() + ")"
    if kind == "ifexp":
        return "(" + e() + " if " + e() + " else " + e() + ")"
    if kind == "compare":
        return "(" + e() + draw(st.sampled_from([" == ", " is not ", " < ", " in "])) + e() + ")"
    if kind == "fstring":
        if env.inline:  # no f-string inside an f-string's field before Python 3.12
            return draw(atom(env))
        q = draw(st.sampled_from(['"', "'"]))
        inner = replace(env, inline=True, banned_quote=q, bracketed=True)
        body = draw(expression(inner, depth - 1))
        spec = draw(st.sampled_from(["", "!r", ":>10", "!s:^4"]))
        text = draw(st.sampled_from(["", "été ", "{{literal}} "]))
        return "f" + q + text + "{(" + body + ")" + spec + "}" + q
    # parenthesized, with a comment inside when allowed
    if not env.inline and draw(st.booleans()):
        return "(  # why ⟨\n    " + e() + "\n)"
    return "(" + e() + ")"


@dataclass(frozen=True)
class Block:
    indent: str  # the program's indentation unit
    level: int

    @property
    def prefix(self) -> str:
        return self.indent * self.level

    def deeper(self) -> Block:
        return Block(self.indent, self.level + 1)


@st.composite
def statement(draw, env: Env, block: Block, depth: int, *, in_function: bool = False, targets: bool = True) -> Code:
    """One statement (maybe compound), at ``block``'s indentation, ending with a newline."""
    make = expression if targets else near_miss_expression
    p, inner = block.prefix, block.deeper()

    def e() -> Code:
        return draw(make(env, depth))

    def body(function: bool = in_function) -> Code:
        if depth > 0 and draw(st.integers(0, 2)) == 0:
            return draw(statement(env, inner, depth - 1, in_function=function, targets=targets))
        return Code.ctx(inner.prefix + draw(st.sampled_from(["pass", "...", "x = 1", "y = données"])) + "\n")

    kinds = ["assign", "assign", "expr", "augassign", "annassign", "if", "for", "while", "with", "decorated",
             "match", "try", "class", "assert", "semicolons", "async", "continuation"]
    if in_function:
        kinds.append("return")
    kind = draw(st.sampled_from(kinds))
    name = draw(st.sampled_from(NAMES))
    if kind == "assign":
        return p + name + draw(st.sampled_from([" = ", "=", " =\t", "  =  "])) + e() + draw(trailer()) + "\n"
    if kind == "expr":
        return p + e() + draw(trailer()) + "\n"
    if kind == "augassign":
        return p + name + " += " + e() + "\n"
    if kind == "annassign":
        return p + name + ": " + draw(st.sampled_from(["int", "'Tensor'", "list[int]"])) + " = " + e() + "\n"
    if kind == "return":
        return p + "return " + e() + "\n"
    if kind == "if":
        code = p + "if " + e() + ":" + draw(trailer()) + "\n" + body()
        if draw(st.booleans()):
            code = code + p + "elif " + e() + ":\n" + body()
        if draw(st.booleans()):
            code = code + p + "else:\n" + body()
        return code
    if kind == "for":
        return p + "for A in " + e() + ":\n" + body() + p + "else:\n" + body()
    if kind == "while":
        return p + "while " + e() + ":\n" + body() + inner.prefix + "break\n"
    if kind == "with":
        return p + "with " + e() + " as prof" + draw(st.sampled_from(["", ", open(p) as fh"])) + ":\n" + body()
    if kind == "decorated":
        decorators = [p + "@" + e() + draw(trailer()) + "\n" for _ in range(draw(st.integers(1, 2)))]
        keyword = draw(st.sampled_from(["def", "async def"]))
        head = p + keyword + " fn(A, flag=" + e() + ", *, k=None):\n"
        if draw(st.booleans()):
            head = p + "class K(Base, metaclass=" + e() + "):\n"
            return join([*decorators, head, body(function=False)])
        return join([*decorators, head, body(function=True), inner.prefix + "return " + e() + "\n"])
    if kind == "match":
        guard = e()
        return (p + "match " + e() + ":\n" + inner.prefix + "case [a, b] if " + guard + ":\n"
                + draw(statement(env, inner.deeper(), depth - 1, in_function=in_function, targets=targets))
                + inner.prefix + "case {'k': v, **rest}:\n" + inner.deeper().prefix + "pass\n"
                + inner.prefix + "case _:\n" + inner.deeper().prefix + "y = " + e() + "\n")
    if kind == "try":
        return (p + "try:\n" + body() + p + "except (ValueError, RuntimeError) as exc:\n" + body()
                + p + "finally:\n" + body())
    if kind == "class":
        return p + "class K:\n" + inner.prefix + "attr = " + e() + "\n" + inner.prefix + "def m(self):\n" \
            + inner.deeper().prefix + "return " + e() + "\n"
    if kind == "assert":
        return p + "assert " + e() + ", " + e() + "\n"
    if kind == "semicolons":
        return p + "a = " + e() + "; b = " + e() + draw(st.sampled_from(["", ";"])) + "\n"
    if kind == "async":
        return p + "async def af():\n" + inner.prefix + "await " + e() + "\n" + inner.prefix \
            + "return [q async for q in " + e() + "]\n"
    # a statement spread over lines with backslash continuations
    return p + name + " = \\\n" + "    " + e() + " + \\\n\t" + e() + "\n"


@st.composite
def trailer(draw) -> str:
    return draw(st.sampled_from(["", "", "  # trailing ☃", "\t", "  # noqa-ish: not a directive", " "]))


@st.composite
def filler(draw) -> str:
    """Lines between statements: blank, comments, whitespace-only, a form feed."""
    return draw(st.sampled_from(["", "", "\n", "# comment: à\n", "   \n", "\x0c\n", "#\t\n", "\n\n"]))


HEADER_EXTRAS = [
    "import os\n",
    "from torch import cholesky, qr\n",
    "from torch import qr\n",
    "from torch.nn import LinearCrossEntropyOptions\n",
    "from torch import profiler\n",
    "from torch.profiler import ProfilerActivity\n",
    "import torch.autograd.profiler\n",
]


@st.composite
def header(draw) -> tuple[str, Env]:
    alias = draw(st.sampled_from(["import torch\n", "import torch as th\n", "import torch\nimport torch as th\n"]))
    torch_name = "th" if "as th" in alias else "torch"
    lines = [alias, *draw(st.lists(st.sampled_from(HEADER_EXTRAS), unique=True, max_size=3))]
    lines = list(draw(st.permutations(lines)))
    if draw(st.booleans()):
        lines.insert(0, "from __future__ import annotations\n")
    names: set[str] = set()
    for line in lines:
        if line.startswith("from torch"):
            names.update(part.strip() for part in line.split(" import ")[1].split(","))
    opening = draw(st.sampled_from(["", "#!/usr/bin/env python3\n", "# -*- coding: utf-8 -*-\n", '"""Módulo ✓."""\n',
                                    "# Copyright\n\n"]))
    return opening + "".join(lines), Env(torch_name, frozenset(names))


@dataclass
class Program:
    header: str
    body: Code
    unsafe: bool

    @property
    def text(self) -> str:
        return self.header + self.body.text


@st.composite
def line_endings(draw, code: Code, head: str) -> tuple[Code, str]:
    """Rewrite the ``\\n`` line endings: all CRLF, all CR, or a mix per line."""
    mode = draw(st.sampled_from(["lf", "lf", "crlf", "crlf", "cr", "mixed"]))
    if mode == "lf":
        return code, head
    if mode != "mixed":
        ending = "\r\n" if mode == "crlf" else "\r"
        change = lambda t: t.replace("\r\n", "\n").replace("\n", ending)  # noqa: E731
        return code.map_text(change), change(head)
    choices = draw(st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=1, max_size=16))
    counter = iter(range(10**9))

    def mixed(text: str) -> str:
        return re.sub(r"\r?\n", lambda _: choices[next(counter) % len(choices)], text)

    head = mixed(head)
    return code.map_text(mixed), head


@st.composite
def program(draw, targets: bool = True) -> Program:
    head, env = draw(header())
    if not targets:  # near misses name numpy and scipy: bound, so not possibly tensors
        head += "import numpy as np\nimport scipy\n"
    indent = draw(st.sampled_from(["    ", "\t", "  ", "        "]))
    block = Block(indent, 0)
    pieces: list[Code | str] = [MARKER]
    for _ in range(draw(st.integers(1, 4))):
        pieces.append(draw(filler()))
        pieces.append(draw(statement(env, block, draw(st.integers(0, 3)), targets=targets)))
    body = join(pieces)
    last_target, last = body.parts[-1]
    if draw(st.booleans()) and not last_target and last.endswith("\n") and not last.endswith("\\\n"):
        body = Code([*body.parts[:-1], (False, last[:-1])])  # no newline at the end of the file
    body, head = draw(line_endings(body, head))
    return Program(head, body, unsafe=draw(st.sampled_from([True, True, True, False])))


# -- near misses: code that must be left alone --------------------------------------------------


@st.composite
def near_miss_expression(draw, env: Env, depth: int) -> Code:
    t = env.torch
    q = env.quote(draw)
    options = [
        f"{t}.linalg.cholesky(A)", f"{t}.linalg.qr(A, mode={q}reduced{q})", "np.linalg.qr(A)", "x.cholesky_solve(b)",
        "scipy.linalg.cholesky(A, True)", f"{q}torch.cholesky(A){q}", "use_cuda", f"{t}.profiler.profile(use_device={q}cuda{q})",
        f"{t}.nn.LinearCrossEntropyOptions(acc_policy={q}compact{q})", f"dict(acc_policy={q}balanced{q})",
        f"{t}.linalg.cholesky_ex(A)", "qr_code(A)", "cholesky", f"{t}.cholesky_inverse(A)", "shapes_spec",
        f"{t}.compile_options(shapes_spec=s)", "x.qr", f"(lambda qr: qr(A))({t}.linalg.qr)",
    ]
    code = Code.ctx(draw(st.sampled_from(options)))
    if depth > 0 and draw(st.booleans()):
        wrapper = draw(st.sampled_from(["f({})", "[{} for _ in xs]", "(lambda: {})", "(w := {})", "({} if c else d)"]))
        before, after = wrapper.split("{}")
        return before + draw(near_miss_expression(env, depth - 1)) + after
    return code


# -- checking one program ------------------------------------------------------------------------


def comments(text: str) -> collections.Counter[str]:
    tokens = tokenize.generate_tokens(io.StringIO(text, newline=None).readline)
    return collections.Counter(tok.string for tok in tokens if tok.type == tokenize.COMMENT)


def body_pattern(body: Code) -> re.Pattern[str]:
    """The body with each run of targets replaced by a lazy wildcard; context matched literally."""
    parts: list[str] = []
    previous_target = False
    for is_target, text in body.parts:
        if is_target:
            if not previous_target:
                parts.append("(.*?)")
            previous_target = True
        elif text:
            parts.append(re.escape(text))
            previous_target = False
    return re.compile("".join(parts), re.DOTALL)


def is_import_line(line: str) -> bool:
    try:
        tree = ast.parse(line.strip())
    except SyntaxError:
        return False
    return len(tree.body) >= 1 and all(isinstance(node, (ast.Import, ast.ImportFrom)) for node in tree.body)


def check_header(before: str, after: str) -> None:
    """Only whole import lines may appear; only ``from`` import lines may shrink or go."""
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for line in old[i1:i2]:
            assert line.startswith("from "), f"header line changed or removed: {line!r}\n{before!r}\n->\n{after!r}"
        for line in new[j1:j2]:
            assert is_import_line(line), f"header gained a line that is not an import: {line!r}\n{after!r}"


def compiles(text: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # `x is 1` and the like: generated, and beside the point
        compile(text, "<generated>", "exec", dont_inherit=True)


def valid(text: str) -> bool:
    """Whether a generated program compiles (the generators avoid most, not all, invalid corners)."""
    try:
        compiles(text)
    except SyntaxError:
        return False
    return True


def fix(text: str, unsafe: bool) -> torchup.FixResult:
    return torchup.fix_source(text, path="generated.py", unsafe_fixes=unsafe)


def report_notes(result: torchup.FixResult) -> list[str]:
    return [note for finding in result.remaining for note in finding.notes if "report" in note]


def _program(header: str, *parts: tuple[bool, str], unsafe: bool = True) -> Program:
    return Program(header, Code([(False, MARKER), *parts]), unsafe)


# Failures found by earlier runs, kept so that every run tries them.
FOUND = [
    # A `from` import dropped on a line ended by a lone CR became `pass` (and, before a CR line that
    # was followed by an LF line, took that line with it).
    _program("import torch\rimport os\rfrom torch import qr\r", (False, "A = "), (True, "qr(A)"), (False, "\r")),
    # The only argument of a call removed: the safety check took `profile()` for a change elsewhere.
    _program("import torch\n", (False, "A = "), (True, "torch.autograd.profiler.profile(use_cuda=False)"),
             (False, "\n")),
    # The last argument removed on CRLF lines: the line before it lost its CR.
    _program("import torch\r\n", (False, "with "),
             (True, "torch.autograd.profiler.profile(\r\n    record_shapes=True,\r\n    use_cuda=False\r\n)"),
             (False, " as p:\r\n    pass\r\n")),
]


def with_found(test):
    for found in FOUND:
        test = example(found)(test)
    return test


@given(program())
@with_found
@SETTINGS
def test_fix_output_compiles_and_touches_only_targets(prog: Program):
    source = prog.text
    assume(valid(source))
    result = fix(source, prog.unsafe)
    out = result.source
    event(f"findings fixed: {'none' if not result.fixed else '1-2' if len(result.fixed) < 3 else '3+'}")

    compiles(out)
    assert MARKER.strip() in out
    split = out.index(MARKER.rstrip("\n"))
    check_header(prog.header, out[:split])
    pattern = body_pattern(prog.body)
    assert pattern.fullmatch(out[split:]) is not None, (
        "text outside the targets changed:\n" + "".join(difflib.unified_diff(
            source.splitlines(keepends=True), out.splitlines(keepends=True), "before", "after"))
    )
    assert comments(out) == comments(source), "a comment was lost or added"
    assert report_notes(result) == [], "a fix was rejected by a safety net"


@given(program())
@with_found
@SETTINGS
def test_fixing_twice_is_a_no_op(prog: Program):
    assume(valid(prog.text))
    first = fix(prog.text, prog.unsafe).source
    second = fix(first, prog.unsafe)
    assert second.source == first
    assert second.fixed == []


@given(program(targets=False))
@SETTINGS
def test_code_without_findings_is_returned_untouched(prog: Program):
    source = prog.text
    assume(valid(source))
    assert not prog.body.has_target
    result = fix(source, prog.unsafe)
    assert result.source == source
    assert result.fixed == []
    assert [f for f in torchup.check_source(source, path="generated.py") if f.fix is not None] == []


@given(program())
@with_found
@SETTINGS
def test_code_whose_findings_have_no_fix_is_returned_untouched(prog: Program):
    """Whatever the program: when nothing reported carries a fix, the text comes back as it was."""
    source = prog.text
    assume(valid(source))
    findings = torchup.check_source(source, path="generated.py")
    fixable = [f for f in findings if f.fix is not None and (prog.unsafe or f.fix.applicability is Applicability.SAFE)]
    result = fix(source, prog.unsafe)
    if not fixable:
        assert result.source == source
    else:  # (a fix a safety net turned down says so; test_fix_output_... fails on that)
        notes = [note for finding in result.remaining for note in finding.notes if "fix not applied" in note]
        assert result.fixed or notes, "fixable findings were reported, but nothing was fixed and nothing said why"
