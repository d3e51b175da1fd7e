"""Run-time detection of what torch 2.14 changes, while the user's program runs unchanged.

Two mechanisms, both public: a ``torch.overrides.TorchFunctionMode`` sees every torch function
and Tensor method call (the clamp family, ``fmax``/``fmin``); thin wrappers around the removed or
changed entry points (``torch.cholesky``, the profilers, ``LinearCrossEntropyOptions``,
``torch.compile``) record their call sites, because 2.14 turned some of them into plain Python
stubs that the torch-function protocol never sees. Every wrapper calls the original with the
original arguments; measurements run under ``no_grad`` on detached tensors, so results and
gradients are untouched.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

import torchup

_SKIP_DIRS = tuple(
    os.path.dirname(os.path.abspath(path)) + os.sep
    for path in (torch.__file__, torchup.__file__)
) + tuple(
    os.path.abspath(p) + os.sep for p in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]}
)


@dataclass
class Site:
    """Where in the user's code a traced call was made."""

    path: str
    line: int
    function: str


@dataclass
class Finding:
    """A behaviour change seen at run time at one call site."""

    code: str
    api: str
    site: Site
    message: str
    calls: int = 0
    calls_on_bound: int = 0  # clamp / fmax: calls where some element sat on a bound (or tie)
    elements_on_bound: int = 0
    elements: int = 0
    bound_kinds: set[str] = field(default_factory=set)

    @property
    def share(self) -> float:
        return self.elements_on_bound / self.elements if self.elements else 0.0


def user_site() -> Site:
    """The innermost frame that is the user's code (not torch, torchup or the standard library)."""
    frame: FrameType | None = sys._getframe(2)
    fallback: Site | None = None
    while frame is not None:
        filename = frame.f_code.co_filename
        site = Site(filename, frame.f_lineno, frame.f_code.co_name)
        if fallback is None:
            fallback = site
        if not filename.startswith("<") and not os.path.abspath(filename).startswith(_SKIP_DIRS):
            return site
        frame = frame.f_back
    return fallback or Site("<unknown>", 0, "<unknown>")


CLAMP_FUNCTIONS: dict[Any, str] = {}
for _owner, _prefix in ((torch, "torch"), (torch.Tensor, "Tensor")):
    for _name in ("clamp", "clip", "clamp_min", "clamp_max", "clamp_", "clip_", "clamp_min_", "clamp_max_"):
        if hasattr(_owner, _name):
            CLAMP_FUNCTIONS[getattr(_owner, _name)] = f"{_prefix}.{_name}"
TIE_FUNCTIONS: dict[Any, str] = {
    getattr(owner, name): f"{prefix}.{name}"
    for owner, prefix in ((torch, "torch"), (torch.Tensor, "Tensor"))
    for name in ("fmax", "fmin")
    if hasattr(owner, name)
}


class Recorder:
    """Aggregates findings by (code, API, call site); safe to call from several threads."""

    def __init__(self) -> None:
        self.findings: dict[tuple[str, str, str, int], Finding] = {}
        self._lock = threading.Lock()

    def record(self, code: str, api: str, message: str, site: Site | None = None) -> Finding:
        site = site or user_site()
        key = (code, api, site.path, site.line)
        with self._lock:
            finding = self.findings.get(key)
            if finding is None:
                finding = self.findings[key] = Finding(code, api, site, message)
            finding.calls += 1
        return finding


def _bound_kind(bound: Any) -> str | None:
    if bound is None:
        return None
    return "tensor" if isinstance(bound, torch.Tensor) else "scalar"


def _clamp_bounds(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """(min, max) of a clamp-family call, from positional or keyword arguments."""
    rest = args[1:]
    if name.split(".")[-1].startswith("clamp_min"):
        return (rest[0] if rest else kwargs.get("min")), None
    if name.split(".")[-1].startswith("clamp_max"):
        return None, (rest[0] if rest else kwargs.get("max"))
    low = rest[0] if len(rest) > 0 else kwargs.get("min")
    high = rest[1] if len(rest) > 1 else kwargs.get("max")
    return low, high


def _count_on_bounds(x: torch.Tensor, low: Any, high: Any) -> int:
    with torch.no_grad():
        values = x.detach()
        hits = torch.zeros(values.shape, dtype=torch.bool, device=values.device)
        for bound in (low, high):
            if bound is not None:
                other = bound.detach() if isinstance(bound, torch.Tensor) else bound
                hits = hits | (values == other)
        return int(hits.sum().item())


class BoundaryWatch:
    """Measures clamp-family and fmax/fmin calls on inputs that require grad."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    def on_clamp(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        x = args[0] if args else kwargs.get("input")
        if not isinstance(x, torch.Tensor) or not torch.is_grad_enabled():
            return
        low, high = _clamp_bounds(name, args, kwargs)
        bound_requires_grad = any(isinstance(b, torch.Tensor) and b.requires_grad for b in (low, high))
        if not (x.requires_grad or bound_requires_grad) or not (x.is_floating_point() or x.is_complex()):
            return
        kinds = {k for k in (_bound_kind(low), _bound_kind(high)) if k}
        finding = self.recorder.record("TU201", name, CLAMP_MESSAGE)
        finding.bound_kinds |= kinds
        on_bound = _count_on_bounds(x, low, high)
        finding.elements += x.numel()
        finding.elements_on_bound += on_bound
        finding.calls_on_bound += on_bound > 0

    def on_ties(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        x = args[0] if args else kwargs.get("input")
        y = args[1] if len(args) > 1 else kwargs.get("other")
        tensors = [t for t in (x, y) if isinstance(t, torch.Tensor)]
        if len(tensors) < 2 or not torch.is_grad_enabled() or not any(t.requires_grad for t in tensors):
            return
        finding = self.recorder.record("TU202", name, TIE_MESSAGE)
        with torch.no_grad():
            a, b = torch.broadcast_tensors(x.detach(), y.detach())
            ties = int(((a == b) | (a.isnan() ^ b.isnan())).sum().item())
        finding.elements += a.numel()
        finding.elements_on_bound += ties
        finding.calls_on_bound += ties > 0


class BoundaryMode(TorchFunctionMode):
    """The same watch through ``torch.overrides.TorchFunctionMode``: it also sees calls that
    bypass module attributes (``torch.Tensor.clamp`` fetched before tracing began), at the cost
    of a Python call on every torch operation. ``torchup trace --all-calls`` uses it."""

    def __init__(self, watch: BoundaryWatch) -> None:
        super().__init__()
        self.watch = watch

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        kwargs = kwargs or {}
        name = CLAMP_FUNCTIONS.get(func)
        if name is not None:
            self.watch.on_clamp(name, args, kwargs)
        elif func in TIE_FUNCTIONS:
            self.watch.on_ties(TIE_FUNCTIONS[func], args, kwargs)
        return func(*args, **kwargs)


def _watching(handler: Callable[[str, tuple[Any, ...], dict[str, Any]], None], name: str, original: Any) -> Any:
    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        handler(name, args, kwargs)
        return original(*args, **kwargs)

    return wrapper


def install_boundary_wrappers(watch: BoundaryWatch, patcher: Patcher) -> None:
    """Wrap each clamp-family and fmax/fmin entry point: no cost for any other operation."""
    for table, handler in ((CLAMP_FUNCTIONS, watch.on_clamp), (TIE_FUNCTIONS, watch.on_ties)):
        for name in table.values():
            owner = torch if name.startswith("torch.") else torch.Tensor
            attribute = name.split(".", 1)[1]
            patcher.wrap(owner, attribute, lambda f, n=name, h=handler: _watching(h, n, f))


CLAMP_MESSAGE = (
    "elements sat exactly on a clamp bound while gradients were recorded; torch 2.14 changes their gradient "
    "(scalar bound: 1 -> 0; tensor bound: split 0.5 to the input, 0.5 to the bound)"
)
TIE_MESSAGE = (
    "fmax/fmin saw ties (or one NaN operand) while gradients were recorded; torch 2.14 splits a tie's "
    "gradient 0.5/0.5 (2.13: all to one side), and 2.14.1 gives 1 to both sides next to a NaN"
)


# -- wrappers around entry points that 2.14 removed or changed ----------------------------------
@dataclass
class Patch:
    """An attribute the tracer replaced, and how to restore it."""

    owner: Any
    name: str
    original: Any
    had_own: bool  # the attribute was in owner.__dict__ (else inherited: restore by deleting)


class Patcher:
    def __init__(self) -> None:
        self.patches: list[Patch] = []

    def wrap(self, owner: Any, name: str, make: Callable[[Any], Any]) -> None:
        original = getattr(owner, name, None)
        if original is None:
            return
        had_own = name in getattr(owner, "__dict__", {})
        setattr(owner, name, make(original))
        self.patches.append(Patch(owner, name, original, had_own))

    def restore(self) -> None:
        for patch in reversed(self.patches):
            if patch.had_own:
                setattr(patch.owner, patch.name, patch.original)
            else:
                delattr(patch.owner, patch.name)
        self.patches.clear()


REMOVED_CALLS = {
    "cholesky": ("TU101", "TU102", "removed in torch 2.14 (raises RuntimeError); use torch.linalg.cholesky"),
    "qr": ("TU103", "TU104", "removed in torch 2.14 (raises RuntimeError); use torch.linalg.qr"),
    "symeig": ("TU105", "TU105", "removed (raises); use torch.linalg.eigh"),
    "eig": ("TU105", "TU105", "removed (raises); use torch.linalg.eig"),
    "lstsq": ("TU105", "TU105", "removed (raises); use torch.linalg.lstsq"),
    "solve": ("TU105", "TU105", "removed (raises); use torch.linalg.solve"),
    "matrix_rank": ("TU105", "TU105", "removed (raises); use torch.linalg.matrix_rank"),
}


def _recording(recorder: Recorder, code: str, api: str, message: str, original: Any) -> Any:
    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        recorder.record(code, api, message)
        return original(*args, **kwargs)

    return wrapper


def _keyword_watch(
    recorder: Recorder, code: str, api: str, message: str, original: Any, check: Callable[..., bool]
) -> Any:
    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if check(*args, **kwargs):
            recorder.record(code, api, message)
        return original(*args, **kwargs)

    return wrapper


def _balanced(*args: Any, **kwargs: Any) -> bool:
    # __init__(self, allow_retain_graph, batch_chunk_size, chunking_method, acc_policy, acc_dtype)
    policy = kwargs.get("acc_policy", args[4] if len(args) > 4 else None)
    return policy == "balanced"


def install(recorder: Recorder, patcher: Patcher, *, compile_unsupported: bool) -> None:
    """Wrap the entry points; ``compile_unsupported``: the target Python refuses torch.compile."""
    for name, (function_code, method_code, message) in REMOVED_CALLS.items():
        patcher.wrap(torch, name, lambda f, c=function_code, n=name, m=message: _recording(
            recorder, c, f"torch.{n}", f"torch.{n} is {m}", f))
        patcher.wrap(torch.Tensor, name, lambda f, c=method_code, n=name, m=message: _recording(
            recorder, c, f"Tensor.{n}", f"Tensor.{n}() is {m}", f))
    use_cuda = "use_cuda= is gone in torch 2.14 (TypeError); use use_device= / activities="
    for owner, api in ((torch.autograd.profiler.profile, "torch.autograd.profiler.profile"),
                       (torch.profiler.profile, "torch.profiler.profile")):
        patcher.wrap(owner, "__init__", lambda f, a=api: _keyword_watch(
            recorder, "TU110", a, f"{a}({use_cuda})", f, lambda *_, **kw: "use_cuda" in kw))
    options = getattr(torch.nn, "LinearCrossEntropyOptions", None)
    if options is not None:
        patcher.wrap(options, "__init__", lambda f: _keyword_watch(
            recorder, "TU120", "torch.nn.LinearCrossEntropyOptions",
            'acc_policy="balanced" is a ValueError in torch 2.14; use "compact"', f, _balanced))
    compile_message = "torch.compile raises RuntimeError on Python 3.15+ with torch 2.13 and 2.14; torch 2.15 lifts it"

    def compile_check(*_: Any, **kwargs: Any) -> bool:
        if "shapes_spec" in kwargs:
            recorder.record("TU130", "torch.compile", "shapes_spec= is called dynamic_shapes= in torch 2.14")
        return compile_unsupported

    patcher.wrap(torch, "compile", lambda f: _keyword_watch(
        recorder, "TU301", "torch.compile", compile_message, f, compile_check))
    dynamo = sys.modules.get("torch._dynamo")
    if dynamo is not None and compile_unsupported:
        patcher.wrap(dynamo, "optimize", lambda f: _keyword_watch(
            recorder, "TU301", "torch._dynamo.optimize", compile_message, f, lambda *_, **__: True))
