"""Version gates: an ``if`` test (or a ternary's) that says which torch releases run which branch.

    if version.parse(torch.__version__) >= version.parse("2.3"):
        scaler = torch.amp.GradScaler("cuda")      # torch >= 2.3
    else:
        scaler = torch.cuda.amp.GradScaler()       # torch < 2.3 only: the old branch

``evaluate_gate`` answers with a ``Gate``: the release R below which alone the old branch runs. A test
is evaluated as two sets of releases, those where it may be true and those where it may be false
(``Truth``); a branch whose set lies wholly below R runs only on torch < R. That makes ``not``,
``and``, ``or``, reversed operands and ``==``/``!=`` follow from the sets: in ``if new_enough and
cuda:`` the ``else`` branch also runs on a new torch without CUDA, so it is no old branch.

What a test can refer to besides torch's version itself is a fact of the file that defines it
(``collect_gate_facts``): a constant (``TORCH_GE_1_8 = version.parse(torch.__version__) >= ...``,
``TORCH_MAJOR, TORCH_MINOR = map(int, torch.__version__.split(".")[:2])``), a helper found by what
its body computes (a comparison of torch's version with its arguments; a version parser such as
mmcv's ``digit_version``; a function returning torch's version). Facts are keyed by qualified name
and plain JSON, so a project-wide pass can merge the files' facts (``GateFacts.merge``) and a cache
can keep them. Helpers of well-known libraries (accelerate, transformers, Lightning, mmcv) are
known by their qualified names. Flags and helpers known only by name (``_TORCH_GREATER_EQUAL_2_4``)
give a gate with ``certain`` False.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

Release = tuple[int, ...]
Point = tuple[int, int, int]  # (major, minor, patch)
Spans = tuple[tuple[Point, Point], ...]  # sorted, disjoint [low, high) ranges of releases
QualifiedName = Callable[[ast.expr], "str | None"]

_END: Point = (1 << 30, 0, 0)  # past every release
# The release a feature probe (`hasattr(torch, "compile")`) stands for: unknown, so taken as later
# than any real one. Sound: "runs only below min(R, 2.3)" still means "only below 2.3".
_PROBED: Point = ((1 << 30) - 1, 0, 0)
_ALL: Spans = (((0, 0, 0), _END),)
_MAJORS = 10  # majors a test of the minor alone is evaluated for; above them it is unknown

_OPS: dict[type[ast.cmpop], str] = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
}
_REVERSED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_OPERATOR_FUNCTIONS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}

# What spells torch's version.
_TORCH_VERSION_NAMES = frozenset({"torch.__version__", "torch.version.__version__"})
# Functions that read a distribution's version: `importlib.metadata.version("torch")`.
_DISTRIBUTION_VERSION = frozenset({"importlib.metadata.version", "importlib_metadata.version"})
# Functions that parse a version string into something that compares as a version.
_PARSERS = frozenset({
    "packaging.version.parse", "packaging.version.Version", "pkg_resources.parse_version",
    "distutils.version.LooseVersion", "distutils.version.StrictVersion", "looseversion.LooseVersion",
    "setuptools._distutils.version.LooseVersion", "torch.torch_version.TorchVersion",
    "mmcv.utils.digit_version", "mmcv.utils.version_utils.digit_version", "mmengine.utils.digit_version",
    "mmengine.utils.version_utils.digit_version", "mmengine.digit_version",
})
_ACCELERATE = {"kind": "helper", "op_arg": 0, "version_arg": 1, "value": ["version", 3]}  # (">=", "2.3")
_TRANSFORMERS = {"kind": "helper", "op": ">=", "version_arg": 0, "value": ["version", 3]}  # ("2.4")
_LIGHTNING = {"kind": "helper", "package_arg": 0, "op_arg": 1, "version_arg": 2, "value": ["version", 3]}
_WELL_KNOWN_HELPERS: dict[str, dict[str, Any]] = {
    "accelerate.utils.is_torch_version": _ACCELERATE,
    "accelerate.utils.imports.is_torch_version": _ACCELERATE,
    "transformers.utils.is_torch_greater_or_equal": _TRANSFORMERS,
    "transformers.utils.import_utils.is_torch_greater_or_equal": _TRANSFORMERS,
    "lightning_utilities.core.imports.compare_version": _LIGHTNING,  # ("torch", operator.ge, "2.4")
    "lightning_utilities.compare_version": _LIGHTNING,
}
# The well-known helpers by their own name, where it resolves to nothing the file shows (a relative
# import of a copy, a star import): a gate then, though not ``certain``.
_NAMED_HELPERS = {
    "is_torch_version": "accelerate.utils.is_torch_version",
    "is_torch_greater_or_equal": "transformers.utils.is_torch_greater_or_equal",
    "compare_version": "lightning_utilities.compare_version",
}
# Flags and helpers named for the comparison: `_TORCH_GREATER_EQUAL_2_4`, `TORCH_GE_1_13`,
# `torch_version_geq(1, 13)`, `is_torch_greater_or_equal("2.4")`, MONAI's `pytorch_after(1, 11)`; the release is in
# the name or the arguments.
# (`torch_`, not `torchvision_`: `is_torchvision_greater_or_equal("0.29")` is another package's release)
_NEW_FLAG = re.compile(r"torch(?=_)\w*?(GREATER|_GE\b|_GE_|GEQ|AT_LEAST|NEWER|_GTE|_AFTER\b)", re.IGNORECASE)
_OLD_FLAG = re.compile(r"torch(?=_)\w*?(LESS|_LT\b|_LT_|_LTE|OLDER|BELOW|BEFORE)", re.IGNORECASE)
_FLAG_RELEASE = re.compile(r"(?<![0-9])(\d+)(?:_(\d+))?(?:_(\d+))?$")
# A flag that includes its release on the old side: `TORCH_LESS_EQUAL_1_8`, `TORCH_LTE_1_8`.
_INCLUSIVE_OLD = re.compile(r"LESS_?(THAN_?)?(OR_?)?EQ|_LTE|LEQ", re.IGNORECASE)


@dataclass(frozen=True)
class Gate:
    """What a version test says: ``old`` ("body" or "orelse") runs only on torch < ``release``.

    ``release`` None: a feature probe (``hasattr(torch, "compile")``); the old branch runs only on
    the releases before the one that added the name, which the test alone does not say. ``certain``:
    evaluated from what the code computes, not only from a name (``_TORCH_GREATER_EQUAL_2_4``).
    ``text``: the test as written (unparsed)."""

    release: Release | None
    old: Literal["body", "orelse"]
    certain: bool
    text: str

    @property
    def release_text(self) -> str:
        return ".".join(map(str, self.release)) if self.release is not None else "?"


@dataclass(frozen=True)
class Truth:
    """Where a test may be true and where it may be false: a release in both is unknown."""

    true: Spans
    false: Spans
    certain: bool = True

    def negated(self) -> Truth:
        return Truth(self.false, self.true, self.certain)


_UNKNOWN = Truth(_ALL, _ALL)


@dataclass(frozen=True)
class TorchValue:
    """Torch's version in some form: ``"version"`` (compares as a whole version: n parts), ``"prefix"``
    (a tuple of its first n numbers), ``"component"`` (number n), ``"parts"`` (``split(".")``, the first
    n or all: 0), ``"ints"`` (``map(int, parts)``), ``"pieces"`` (``split("+")``: the version comes first)."""

    kind: str
    n: int = 3
    certain: bool = True  # False: only a name says it is torch's version (`TORCH_VERSION` of unknown origin)

    def derived(self, kind: str, n: int = 3) -> TorchValue:
        return TorchValue(kind, n, self.certain)


@dataclass(frozen=True)
class Constant:
    """A literal release: ``"2.3"``, ``(2, 3)``, ``parse("2.3")``, or a number (``2``)."""

    parts: Release


@dataclass(frozen=True)
class Param:
    """A parameter of the helper being read (``collect_gate_facts``); ``parsed``: passed through a parser."""

    index: int


@dataclass(frozen=True)
class Operator:
    """A comparison operator given as a value: ``">="``, ``operator.ge``, or a parameter of the helper."""

    op: str | None = None
    param: int | None = None


@dataclass(frozen=True)
class Comparison:
    """A helper's result: torch's ``value`` compared (``op`` or the operator parameter) with a parameter."""

    value: TorchValue
    version_arg: int
    op: str | None = None
    op_arg: int | None = None


Value = Truth | TorchValue | Constant | Param | Operator | Comparison | None


@dataclass
class GateFacts:
    """What files define for version tests, keyed by qualified name (``module.NAME``): plain JSON.

    Each fact is a dict: ``{"kind": "truth", "true": spans, "false": spans, "certain": bool}`` (a flag),
    ``{"kind": "value", "value": [kind, n]}`` (a constant holding torch's version in some form),
    ``{"kind": "helper", "value": [kind, n], "version_arg": i, "op": ">=" | "op_arg": j}`` (a function
    comparing torch's version with an argument), ``{"kind": "parser"}`` (a function parsing a version
    string), ``{"kind": "getter", "value": [kind, n]}`` (a function returning torch's version).
    ``module``: the file's own module, for the names it uses unqualified ("" for a file alone)."""

    facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    module: str = ""

    def merge(self, other: GateFacts) -> GateFacts:
        """This file's facts with another's (this file's win): what a project-wide pass shares."""
        return GateFacts({**other.facts, **self.facts}, self.module)

    def to_json(self) -> dict[str, Any]:
        return {"module": self.module, "facts": self.facts}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GateFacts:
        return cls(dict(data.get("facts", {})), str(data.get("module", "")))

    def lookup(self, key: str | None) -> dict[str, Any] | None:
        return self.facts.get(key) if key else None

    def local_key(self, name: str) -> str:
        return f"{self.module}.{name}" if self.module else name


# -- release sets -------------------------------------------------------------------------------


def _point(parts: Release) -> Point:
    padded = (*parts[:3], 0, 0, 0)
    return padded[0], padded[1], padded[2]


def _next(parts: Release) -> Release:
    return (*parts[:-1], parts[-1] + 1)


def _below(parts: Release) -> Spans:
    point = _point(parts)
    return (((0, 0, 0), point),) if point > (0, 0, 0) else ()


def _between(low: Release, high: Release) -> Spans:
    return ((_point(low), _point(high)),)


def _union(a: Spans, b: Spans) -> Spans:
    merged: list[tuple[Point, Point]] = []
    for low, high in sorted((*a, *b)):
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return tuple(merged)


def _complement(a: Spans) -> Spans:
    result, start = [], (0, 0, 0)
    for low, high in a:
        if low > start:
            result.append((start, low))
        start = max(start, high)
    if start < _END:
        result.append((start, _END))
    return tuple(result)


def _intersection(a: Spans, b: Spans) -> Spans:
    return _complement(_union(_complement(a), _complement(b)))


def _both(a: Truth, b: Truth) -> Truth:
    return Truth(_intersection(a.true, b.true), _union(a.false, b.false), a.certain and b.certain)


def _either(a: Truth, b: Truth) -> Truth:
    return Truth(_union(a.true, b.true), _intersection(a.false, b.false), a.certain and b.certain)


def _exact(true: Spans, certain: bool = True) -> Truth:
    return Truth(true, _complement(true), certain)


def _compare_prefix(n: int, op: str, parts: Release) -> Spans:
    """The releases whose first ``n`` numbers, as a tuple, compare ``op`` with the tuple ``parts``."""
    m = min(n, len(parts), 3)
    head = parts[:m]
    if not head:
        return ()
    less = _below(_next(head)) if n < len(parts) else _below(head)
    equal = _between(head, _next(head)) if n == len(parts) else ()
    sets = {
        "<": less, "<=": _union(less, equal), ">": _complement(_union(less, equal)),
        ">=": _complement(less), "==": equal, "!=": _complement(equal),
    }
    return sets[op]


def _compare(value: TorchValue, op: str, constant: Constant) -> Truth | None:
    """Torch's ``value`` ``op`` ``constant`` as release sets; None when they do not compare."""
    parts, certain = constant.parts, value.certain
    if value.kind == "version":  # a whole version: "2.3" == "2.3.0"
        return _exact(_compare_prefix(3, op, _point(parts)), certain)
    if value.kind == "prefix":
        return _exact(_compare_prefix(value.n, op, parts), certain)
    if value.kind != "component" or len(parts) != 1:
        return None
    if value.n == 0:
        return _exact(_compare_prefix(1, op, parts), certain)
    if value.n != 1:
        return None  # (a patch number alone says little)
    known: Spans = ()
    for major in range(_MAJORS):  # the minor within each major
        within = _intersection(_between((major,), (major + 1,)), _compare_prefix(2, op, (major, parts[0])))
        known = _union(known, within)
    unknown = ((_point((_MAJORS,)), _END),)
    rest = _intersection(_complement(known), _below((_MAJORS,)))
    return Truth(_union(known, unknown), _union(rest, unknown), certain)


def _probe(release: Release | None, new_when_true: bool, certain: bool, inclusive: bool = False) -> Truth:
    """A test true from ``release`` on (``new_when_true``) or only before it; None: a feature probe."""
    point = _point(_next(release) if inclusive and release else release) if release else _PROBED
    below = (((0, 0, 0), point),)
    truth = Truth(_complement(below), below, certain)
    return truth if new_when_true else truth.negated()


def gate_of(truth: Truth, text: str) -> Gate | None:
    """The branch a ``Truth`` leaves to old releases alone, if any."""
    if not truth.true or not truth.false:
        return None  # (the same branch on every release: no gate)
    for old, spans in (("body", truth.true), ("orelse", truth.false)):
        high = spans[-1][1]
        if high < _END:
            release = None if high == _PROBED else _release(high)
            return Gate(release, old, truth.certain, text)  # type: ignore[arg-type]
    return None


def _release(point: Point) -> Release:
    parts = list(point)
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


# -- reading expressions ------------------------------------------------------------------------


def parse_release(text: str) -> Release | None:
    """``"2.4.0"`` -> (2, 4, 0); ``"2.4.0a0+git"`` -> (2, 4, 0); None when it starts with no number."""
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", text)
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


def _literal(node: ast.expr) -> Constant | None:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            release = parse_release(node.value)
            return Constant(release) if release else None
        if isinstance(node.value, int) and not isinstance(node.value, bool):
            return Constant((node.value,))
    if isinstance(node, ast.Tuple | ast.List) and node.elts:
        parts = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, int)]
        return Constant(tuple(parts)) if len(parts) == len(node.elts) else None
    return None


def _value_fact(value: TorchValue) -> list[Any]:
    return [value.kind, value.n]


def _value_of(fact: list[Any]) -> TorchValue:
    return TorchValue(str(fact[0]), int(fact[1]))


class _Evaluator:
    """Evaluates expressions of one scope: names through ``qualified_name`` and ``facts``."""

    def __init__(self, qualified_name: QualifiedName, facts: GateFacts, params: dict[str, int] | None = None) -> None:
        self.qualified_name = qualified_name
        self.facts = facts
        self.params = params or {}
        self.locals: dict[str, Value] = {}  # a helper's own names, bound once: `_version = parse(...)`

    def key(self, node: ast.expr) -> str | None:
        name = self.qualified_name(node)
        if name is None and isinstance(node, ast.Name) and node.id not in self.params:
            name = self.facts.local_key(node.id)
        return name

    def fact(self, node: ast.expr) -> dict[str, Any] | None:
        key = self.key(node)
        return _WELL_KNOWN_HELPERS.get(key or "") or self.facts.lookup(key)

    # -- values --
    def value(self, node: ast.expr) -> Value:
        if isinstance(node, ast.Name) and node.id in self.params:
            return Param(self.params[node.id])
        if isinstance(node, ast.Name | ast.Attribute):
            return self._named(node)
        if isinstance(node, ast.Compare) and self.params and len(node.ops) == 1:
            compared = self._param_comparison(node)
            if compared is not None:
                return compared
        negation = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
        if isinstance(node, ast.Compare | ast.BoolOp) or negation:
            return self.truth(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.GeneratorExp | ast.ListComp):
            return self._comprehension(node)
        return _literal(node)

    def _param_comparison(self, node: ast.Compare) -> Comparison | None:
        """In a helper: ``parse(torch.__version__) >= parse(version)``, ``version`` a parameter."""
        op = _OPS.get(type(node.ops[0]))
        a, b = self.value(node.left), self.value(node.comparators[0])
        if isinstance(b, TorchValue):
            a, b, op = b, a, _REVERSED.get(op or "")
        if isinstance(a, TorchValue) and isinstance(b, Param) and op:
            return Comparison(a, b.index, op)
        return None

    def _named(self, node: ast.Name | ast.Attribute) -> Value:
        name = self.qualified_name(node)
        if name in _TORCH_VERSION_NAMES:
            return TorchValue("version")
        if name and name.startswith("operator.") and name[9:] in _OPERATOR_FUNCTIONS:
            return Operator(_OPERATOR_FUNCTIONS[name[9:]])
        if isinstance(node, ast.Name) and node.id in self.locals:
            return self.locals[node.id]
        fact = self.fact(node)
        if fact is not None:
            if fact["kind"] == "truth":
                return Truth(_spans(fact["true"]), _spans(fact["false"]), bool(fact.get("certain", True)))
            if fact["kind"] == "value":
                return _value_of(fact["value"])
            return None
        if isinstance(node, ast.Attribute):
            return self._attribute(node) or _named_version(node.attr)
        return _named_version(node.id)

    def _attribute(self, node: ast.Attribute) -> Value:
        """``parse(torch.__version__).release``, ``.base_version``, ``.major``, ``.minor``."""
        base = self.value(node.value)
        if isinstance(base, TorchValue) and base.kind == "version":
            if node.attr in ("release", "base_version", "public"):
                return base
            if node.attr in ("major", "minor", "micro"):
                return base.derived("component", ("major", "minor", "micro").index(node.attr))
        return None

    def _subscript(self, node: ast.Subscript) -> Value:
        base = self.value(node.value)
        if not isinstance(base, TorchValue):
            return None
        index = node.slice
        if isinstance(index, ast.Constant) and isinstance(index.value, int) and index.value >= 0:
            if base.kind == "pieces":  # `torch.__version__.split("+")[0]`: the version without its local part
                return base.derived("version") if index.value == 0 else None
            if base.kind == "parts" or (base.kind == "version" and index.value == 0):
                return base.derived("component", index.value)  # (`torch.__version__[0]`: the major's first digit)
            if base.kind == "prefix" and index.value < base.n:
                return base.derived("component", index.value)
            return None
        if isinstance(index, ast.Slice) and index.lower is None and index.step is None:
            upper = index.upper
            bounded = isinstance(upper, ast.Constant) and isinstance(upper.value, int) and upper.value > 0
            if bounded and base.kind in ("parts", "prefix"):
                return base.derived(base.kind, upper.value if not base.n else min(base.n, upper.value))  # type: ignore[union-attr]
        return None

    def _comprehension(self, node: ast.GeneratorExp | ast.ListComp) -> Value:
        """``(int(x) for x in torch.__version__.split(".")[:2])``: the ints of the parts."""
        if len(node.generators) != 1 or node.generators[0].ifs:
            return None
        generator = node.generators[0]
        source = self.value(generator.iter)
        element = node.elt
        if (isinstance(source, TorchValue) and source.kind == "parts" and isinstance(generator.target, ast.Name)
                and isinstance(element, ast.Call) and isinstance(element.func, ast.Name) and element.func.id == "int"
                and len(element.args) == 1 and isinstance(element.args[0], ast.Name)
                and element.args[0].id == generator.target.id):
            prefix = source.derived("prefix", source.n or 3)
            return prefix if isinstance(node, ast.ListComp) else source.derived("ints", source.n)
        return None

    def _call(self, node: ast.Call) -> Value:
        func = node.func
        name = self.qualified_name(func)
        args = node.args
        if isinstance(func, ast.Name) and func.id in ("tuple", "list") and len(args) == 1:
            inner = self.value(args[0])
            if isinstance(inner, TorchValue) and inner.kind == "ints":
                return inner.derived("prefix", inner.n or 3)
            return inner if isinstance(inner, TorchValue) and inner.kind == "prefix" else None
        if isinstance(func, ast.Name) and func.id in ("int", "str") and len(args) == 1:
            inner = self.value(args[0])
            return inner if isinstance(inner, TorchValue) and inner.kind == "component" else None
        if isinstance(func, ast.Name) and func.id == "map" and len(args) == 2:
            inner = self.value(args[1])
            if isinstance(args[0], ast.Name) and args[0].id == "int" and isinstance(inner, TorchValue):
                return inner.derived("ints", inner.n) if inner.kind == "parts" else None
            return None
        if isinstance(func, ast.Name) and func.id == "hasattr" and len(args) == 2:
            owner = self.qualified_name(args[0]) or ""
            return _probe(None, True, False) if owner.split(".")[0] == "torch" else None
        if isinstance(func, ast.Attribute) and func.attr in ("split", "startswith"):
            return self._string_method(node, func)
        if name in _DISTRIBUTION_VERSION and len(args) == 1:
            return TorchValue("version") if _string(args[0]) == "torch" else None
        if name in _PARSERS or (self.fact(func) or {}).get("kind") == "parser":
            return self._parsed(args)
        fact = self.fact(func)
        if fact is not None and fact["kind"] == "getter" and not args:
            return _value_of(fact["value"])
        if fact is not None and fact["kind"] == "helper":
            return self._apply(fact, node)
        callee = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if fact is None and callee in _NAMED_HELPERS:  # (`from .imports import is_torch_version`: by name)
            known = self._apply(_WELL_KNOWN_HELPERS[_NAMED_HELPERS[callee]], node)
            return Truth(known.true, known.false, False) if isinstance(known, Truth) else known
        if fact is None and not args and callee:  # kornia's `torch_version()`
            version = _named_version(callee)
            if version is not None:
                return version
        if isinstance(func, ast.Subscript):  # `OPERATIONS[operation](torch_version, parse(version))`
            operator = self.value(func.slice)
            return self._comparison_call(args, operator if isinstance(operator, Param) else None)
        return self._comparison_call(args, None) or self._named_flag(node)

    def _parsed(self, args: list[ast.expr]) -> Value:
        if len(args) != 1:
            return None
        inner = self.value(args[0])
        if isinstance(inner, TorchValue) and inner.kind == "version":
            return inner
        return inner if isinstance(inner, Constant | Param) else None

    def _string_method(self, node: ast.Call, func: ast.Attribute) -> Value:
        base = self.value(func.value)
        if not (isinstance(base, TorchValue) and base.kind == "version" and len(node.args) == 1):
            return None
        if func.attr == "split":
            separator = _string(node.args[0])
            return base.derived("parts", 0) if separator == "." else base.derived("pieces") if separator else None
        prefixes = node.args[0].elts if isinstance(node.args[0], ast.Tuple) else [node.args[0]]
        truth: Truth | None = None
        for prefix in prefixes:
            one = _starts_with(_string(prefix), base.certain)
            if one is None:
                return None
            truth = one if truth is None else _either(truth, one)
        return truth

    def _comparison_call(self, args: list[ast.expr], operator: Param | None) -> Value:
        """``compare_versions(torch.__version__, ">=", "2.3")`` (accelerate's, whatever its name): torch's
        version, then an operator and a release; in a helper, parameters may stand for the last two
        (in that order: accelerate's ``compare_versions(torch_version, operation, version)``)."""
        values = [self.value(arg) for arg in args]
        found = [i for i, v in enumerate(values) if isinstance(v, TorchValue) and v.kind == "version"]
        if len(found) != 1:
            return None
        rest = list(zip(args[found[0] + 1 :], values[found[0] + 1 :], strict=True))
        operators = [Operator(_operator_string(arg)) for arg, _ in rest if _operator_string(arg)]
        operators += [value for _, value in rest if isinstance(value, Operator)]
        if operator is not None:
            operators.append(Operator(param=operator.index))
        targets = [value for _, value in rest if isinstance(value, Constant | Param)]
        if not operators and len(targets) == 2 and isinstance(targets[0], Param):
            operators, targets = [Operator(param=targets[0].index)], targets[1:]
        if len(operators) != 1 or len(targets) != 1:
            return None
        return self._comparison(values[found[0]], operators[0], targets[0])  # type: ignore[arg-type]

    def _comparison(self, value: TorchValue, operator: Operator, target: Value) -> Value:
        if isinstance(target, Constant) and operator.op is not None:
            return _compare(value, operator.op, target)
        if isinstance(target, Param):
            return Comparison(value, target.index, operator.op, operator.param)
        return None

    def _apply(self, fact: dict[str, Any], node: ast.Call) -> Value:
        """A helper's fact applied to a call's arguments."""
        args = node.args
        package = fact.get("package_arg")
        if package is not None and (len(args) <= package or _string(args[package]) != "torch"):
            return None
        if len(args) <= fact["version_arg"]:
            return None
        target = self.value(args[fact["version_arg"]])
        if "op_arg" in fact:
            if len(args) <= fact["op_arg"]:
                return None
            op = _operator_string(args[fact["op_arg"]])
            operator_value = self.value(args[fact["op_arg"]])
            op = op or (operator_value.op if isinstance(operator_value, Operator) else None)
        else:
            op = fact.get("op")
        if not isinstance(target, Constant) or op is None:
            return None
        return _compare(_value_of(fact["value"]), op, target)

    def _named_flag(self, node: ast.expr) -> Truth | None:
        """A flag or helper that says it by name alone: `_TORCH_GREATER_EQUAL_2_4`, `torch_version_geq(1, 13)`."""
        target = node.func if isinstance(node, ast.Call) else node
        if not isinstance(target, ast.Name | ast.Attribute):
            return None
        name = target.id if isinstance(target, ast.Name) else target.attr
        new = _NEW_FLAG.search(name)
        if not new and not _OLD_FLAG.search(name):
            return None
        release = _call_release(node) if isinstance(node, ast.Call) else _name_release(name)
        inclusive = not new and bool(_INCLUSIVE_OLD.search(name))
        return _probe(release, bool(new), False, inclusive)

    # -- tests --
    def truth(self, node: ast.expr) -> Truth:
        """Where ``node`` may be true and may be false; unknown everywhere for what is no version test."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return self.truth(node.operand).negated()
        if isinstance(node, ast.BoolOp):
            combine = _both if isinstance(node.op, ast.And) else _either
            result = self.truth(node.values[0])
            for value in node.values[1:]:
                result = combine(result, self.truth(value))
            return result
        if isinstance(node, ast.Compare):
            return self._compare_chain(node)
        if isinstance(node, ast.Name | ast.Attribute | ast.Call):
            value = self.value(node)
            if isinstance(value, Truth):
                return value
            return self._named_flag(node) or _UNKNOWN
        return _UNKNOWN

    def _compare_chain(self, node: ast.Compare) -> Truth:
        result: Truth | None = None
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            one = self._compare_pair(left, _OPS.get(type(op)), right)
            result = one if result is None else _both(result, one)
            left = right
        return result or _UNKNOWN

    def _compare_pair(self, left: ast.expr, op: str | None, right: ast.expr) -> Truth:
        if op is None:
            return _UNKNOWN
        a, b = self.value(left), self.value(right)
        if isinstance(b, TorchValue) and not isinstance(a, TorchValue):
            a, b, op = b, a, _REVERSED[op]
        if isinstance(a, TorchValue) and isinstance(b, Constant):
            return _compare(a, op, b) or _UNKNOWN
        return self._compare_flag(a, op, right) or _UNKNOWN

    def _compare_flag(self, value: Value, op: str, other: ast.expr) -> Truth | None:
        """``FLAG == True``, ``FLAG is False`` (as ``==``/``!=`` against a bool)."""
        boolean = isinstance(other, ast.Constant) and isinstance(other.value, bool)
        if isinstance(value, Truth) and boolean and op in ("==", "!="):
            return value if (op == "==") == other.value else value.negated()  # type: ignore[attr-defined]
        return None


_VERSION_NAME = re.compile(r"_?torch_version", re.IGNORECASE)


def _named_version(name: str) -> TorchValue | None:
    """``TORCH_VERSION``, ``torch_version``: a name that says it holds torch's version (not ``certain``)."""
    return TorchValue("version", 3, False) if _VERSION_NAME.fullmatch(name) else None


def _spans(data: list[Any]) -> Spans:
    return tuple((tuple(low), tuple(high)) for low, high in data)  # type: ignore[misc]


def _spans_json(spans: Spans) -> list[list[list[int]]]:
    return [[list(low), list(high)] for low, high in spans]


def _string(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _operator_string(node: ast.expr) -> str | None:
    text = _string(node)
    return text if text in _REVERSED else None


def _starts_with(prefix: str | None, certain: bool) -> Truth | None:
    """``torch.__version__.startswith("1.")``: exact for whole numbers followed by a dot; a prefix that
    ends inside a number (``"2.1"`` is also 2.10-2.19's) is no gate."""
    if not prefix or not re.fullmatch(r"(\d+\.)+", prefix):
        return None
    parts = tuple(int(part) for part in prefix.rstrip(".").split("."))
    if len(parts) > 3:
        return None
    return _exact(_between(parts, _next(parts)), certain)


def _name_release(name: str) -> Release | None:
    match = _FLAG_RELEASE.search(name)
    return tuple(int(group) for group in match.groups() if group is not None) if match else None


def _call_release(call: ast.Call) -> Release | None:
    """`torch_version_geq(1, 13)` -> (1, 13); `is_torch_greater_or_equal("2.4")` -> (2, 4)."""
    if call.args and all(isinstance(a, ast.Constant) and isinstance(a.value, int) for a in call.args):
        return tuple(a.value for a in call.args)  # type: ignore[union-attr]
    strings = [_string(a) for a in call.args]
    releases = [parse_release(s) for s in strings if s]
    return releases[0] if len(releases) == 1 and releases[0] else None


# -- the public questions ---------------------------------------------------------------------


def evaluate_gate(test: ast.expr, qualified_name: QualifiedName, facts: GateFacts | None = None) -> Gate | None:
    """The gate ``test`` (an ``if``'s, an ``elif``'s or a ternary's) is, or None when it is none.
    ``qualified_name``: the resolver's answer for an expression (``Context.qualified_name``);
    names it leaves unresolved are looked up as the file's own (``GateFacts.module``)."""
    if not _may_be_gate(test):
        return None
    truth = _Evaluator(qualified_name, facts or GateFacts()).truth(test)
    return gate_of(truth, _text(test))


def _may_be_gate(test: ast.expr) -> bool:
    """A cheap look before the evaluation: a gate refers to something by name."""
    return any(isinstance(node, ast.Name | ast.Attribute) for node in ast.walk(test))


def _text(test: ast.expr) -> str:
    try:
        return ast.unparse(test)
    except (ValueError, RecursionError):
        return ""


def collect_gate_facts(tree: ast.Module, module_name: str = "") -> GateFacts:
    """What one file defines for version tests (see ``GateFacts``): its module-level constants and
    functions. ``module_name``: the file's dotted module (relative imports resolve against it, as for
    a module, not a package's ``__init__``); "" for a file alone."""
    facts = GateFacts({}, module_name)
    imports = _imports(tree, module_name)
    evaluator = _Evaluator(lambda node: _name_from_imports(node, imports), facts)
    assigned: dict[str, int] = {}
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for statement in _module_statements(tree.body):
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            functions.append(statement)
        elif isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                _learn_assignment(facts, evaluator, target, statement.value, assigned)
        elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
            assigned[statement.target.id] = 2
    candidates = _candidates(functions, imports, facts)
    for function in candidates:
        _learn_function(facts, evaluator, function)
    names = {function.name for function in candidates}
    for function, mentions in candidates.items():  # (a helper may call one defined after it)
        if mentions & names:
            _learn_function(facts, evaluator, function)
    for name, count in assigned.items():
        if count > 1:
            facts.facts.pop(facts.local_key(name), None)  # (bound twice: which one holds is unknown)
    return facts


# Words a helper's body spells: torch's version, a parser, a distribution's version.
_VERSION_WORDS = frozenset({
    "__version__", "version", "parse", "Version", "LooseVersion", "StrictVersion", "parse_version",
    "digit_version", "TorchVersion",
})


def _candidates(
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef], imports: dict[str, str], facts: GateFacts
) -> dict[ast.FunctionDef | ast.AsyncFunctionDef, set[str]]:
    """The short functions whose bodies spell a word a helper needs (one walk each), with those words:
    most functions of a file are no helpers, and evaluating their returns cost more than this."""
    known = _PARSERS | _DISTRIBUTION_VERSION | _TORCH_VERSION_NAMES | frozenset(_WELL_KNOWN_HELPERS)
    relevant = set(_VERSION_WORDS) | {name for name, target in imports.items() if target in known}
    relevant |= {key.rpartition(".")[2] for key in facts.facts}
    short = [function for function in functions if len(function.body) <= 12]  # (helpers are short)
    mentions = {
        function: {
            node.id if isinstance(node, ast.Name) else node.attr
            for node in ast.walk(function)
            if isinstance(node, ast.Name | ast.Attribute)
        }
        for function in short
    }
    found = {function: words for function, words in mentions.items() if words & relevant}
    # (and one level of helpers calling those: `def at_least(v): return new_enough(v)`)
    callees = {function.name for function in found}
    found.update({function: words for function, words in mentions.items() if words & callees})
    return found


class LazyGateFacts(GateFacts):
    """A file's own facts, collected on the first question about a name the file binds at module
    level: most ``if`` tests (``if x is None:``) never need them."""

    def __init__(self, tree: ast.Module, module_name: str = "") -> None:
        super().__init__({}, module_name)
        self._tree: ast.Module | None = tree
        self._bound = _module_names(tree)

    def lookup(self, key: str | None) -> dict[str, Any] | None:
        if not key or key.rpartition(".")[2] not in self._bound:
            return None
        if self._tree is not None:
            self.facts = collect_gate_facts(self._tree, self.module).facts
            self._tree = None  # (the facts do not keep the tree alive)
        return self.facts.get(key)


def _module_names(tree: ast.Module) -> frozenset[str]:
    names: set[str] = set()
    for statement in _module_statements(tree.body):
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(statement.name)
        elif isinstance(statement, ast.Assign | ast.AnnAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                elements = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
                names.update(element.id for element in elements if isinstance(element, ast.Name))
    return frozenset(names)


def _module_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module-level statements, also inside ``if``/``try``/``with`` blocks at module level."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.If | ast.Try | ast.With):
            blocks = [statement.body, getattr(statement, "orelse", []), getattr(statement, "finalbody", [])]
            blocks += [handler.body for handler in getattr(statement, "handlers", [])]
            for block in blocks:
                yield from _module_statements(block)


def _learn_assignment(
    facts: GateFacts, evaluator: _Evaluator, target: ast.expr, value: ast.expr, assigned: dict[str, int]
) -> None:
    if isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            if isinstance(element, ast.Name):
                assigned[element.id] = assigned.get(element.id, 0) + 1
        known = evaluator.value(value)
        if isinstance(known, TorchValue) and known.kind in ("ints", "parts", "prefix"):
            for index, element in enumerate(target.elts):
                if isinstance(element, ast.Starred):
                    break
                if isinstance(element, ast.Name):
                    facts.facts[facts.local_key(element.id)] = {"kind": "value", "value": ["component", index]}
        return
    if not isinstance(target, ast.Name):
        return
    assigned[target.id] = assigned.get(target.id, 0) + 1
    known = evaluator.value(value)
    if isinstance(known, Truth) and known != _UNKNOWN and gate_of(known, "") is not None:
        facts.facts[facts.local_key(target.id)] = {
            "kind": "truth", "true": _spans_json(known.true), "false": _spans_json(known.false),
            "certain": known.certain,
        }
    elif isinstance(known, TorchValue) and known.kind in ("version", "prefix", "component") and known.certain:
        facts.facts[facts.local_key(target.id)] = {"kind": "value", "value": _value_fact(known)}


def _learn_function(facts: GateFacts, evaluator: _Evaluator, function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    """A helper found by what it computes (see ``GateFacts``)."""
    params = [arg.arg for arg in (*function.args.posonlyargs, *function.args.args)]
    local = _Evaluator(evaluator.qualified_name, facts, {name: index for index, name in enumerate(params)})
    for statement in function.body:  # (a name the body binds once, at its top level)
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        if len(targets) == 1 and isinstance(targets[0], ast.Name):
            name = targets[0].id
            local.locals[name] = local.value(statement.value) if name not in local.locals else None
    answers = {_answer(local, node.value) for node in _returns(function.body) if node.value is not None}
    answers.discard(None)
    key = facts.local_key(function.name)
    if len(answers) != 1:
        if params and _parses(local, function, params[0]):
            facts.facts[key] = {"kind": "parser"}
        return
    answer = answers.pop()
    if isinstance(answer, Comparison):
        fact: dict[str, Any] = {"kind": "helper", "value": _value_fact(answer.value), "version_arg": answer.version_arg}
        fact.update({"op": answer.op} if answer.op else {"op_arg": answer.op_arg})
        facts.facts[key] = fact
    elif isinstance(answer, TorchValue) and not params:
        facts.facts[key] = {"kind": "getter", "value": _value_fact(answer)}
    elif isinstance(answer, Param) and params and _parses(local, function, params[0]):
        facts.facts[key] = {"kind": "parser"}


def _answer(evaluator: _Evaluator, node: ast.expr) -> Comparison | TorchValue | Param | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return None  # (`return False` when torch is missing says nothing)
    value = evaluator.value(node)
    if isinstance(value, Comparison | TorchValue | Param):
        return value
    return Param(-1)  # (something else: the function is no helper)


def _parses(evaluator: _Evaluator, function: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> bool:
    """mmcv's ``digit_version(version_str)``: the body passes its parameter to a version parser."""
    for node in ast.walk(function):
        argument = node.args[0] if isinstance(node, ast.Call) and len(node.args) == 1 else None
        named = isinstance(argument, ast.Name) and argument.id == param
        if named and evaluator.qualified_name(node.func) in _PARSERS:  # type: ignore[union-attr]
            return True
    return False


def _returns(body: list[ast.stmt]) -> Iterator[ast.Return]:
    """The ``return`` statements of a function body, not of the functions defined in it."""
    for statement in body:
        if isinstance(statement, ast.Return):
            yield statement
        elif not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            for name in ("body", "orelse", "finalbody"):
                yield from _returns(getattr(statement, name, []))
            for handler in getattr(statement, "handlers", []):
                yield from _returns(handler.body)


def _imports(tree: ast.Module, module_name: str) -> dict[str, str]:
    """The names module-level imports bind, to what they name."""
    bound: dict[str, str] = {}
    for statement in _module_statements(tree.body):
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    bound[top] = top
        elif isinstance(statement, ast.ImportFrom):
            module = _absolute(statement, module_name)
            for alias in statement.names:
                if module and alias.name != "*":
                    bound[alias.asname or alias.name] = f"{module}.{alias.name}"
    return bound


def _absolute(statement: ast.ImportFrom, module_name: str) -> str | None:
    if not statement.level:
        return statement.module
    parts = module_name.split(".") if module_name else []
    if statement.level > len(parts):
        return None
    base = parts[: len(parts) - statement.level]
    return ".".join([*base, *([statement.module] if statement.module else [])]) or None


def _name_from_imports(node: ast.expr, imports: dict[str, str]) -> str | None:
    if isinstance(node, ast.Name):
        return imports.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _name_from_imports(node.value, imports)
        return f"{base}.{node.attr}" if base else None
    return None


def file_qualified_name(tree: ast.Module, module_name: str = "") -> QualifiedName:
    """A qualified-name answer from a file's module-level imports alone (no resolver at hand)."""
    imports = _imports(tree, module_name)
    return lambda node: _name_from_imports(node, imports)
