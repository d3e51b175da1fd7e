"""TU601: ``torch.load`` without ``weights_only=`` loads with ``weights_only=True`` since torch 2.6.

Also the shared part of TU601, TU604 and TU606, rules about a call that leaves out a keyword whose
default changed: finding the uses of a function (calls, ``functools.partial``, the function passed
on) and deciding whether a call gives the keyword.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from enum import Enum

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits, literal_dict_keyword
from torchup.analysis.resolver import BindingKind, ScopeKind
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Fix, Severity
from torchup.core.lexing import Spans
from torchup.prefilter.calls import every_call_passes
from torchup.rules._arguments import append_argument

# -- shared with TU604 and TU606 ------------------------------------------------------------------

PARTIAL = "functools.partial"
MOCK_MODULES = ("unittest.mock.", "mock.")  # a function handed to a mock is not called through it


class Given(Enum):
    YES = "given"  # the call passes the parameter (by keyword, position, or a visible `**{...}` key)
    NO = "missing"  # it surely does not
    UNKNOWN = "unknown"  # `**options` or `*args` may hold it


@dataclass(frozen=True)
class Use:
    """One reference to a function: its call, a ``functools.partial`` of it, or the function passed on."""

    node: ast.expr  # the reference itself
    qualname: str
    call: ast.Call | None  # the call whose arguments reach the function: the call, or the partial
    skip: int = 0  # leading positional arguments of ``call`` that are not the function's (partial: 1)
    passed_to: ast.Call | None = None  # a reference given as an argument to another call
    alias: str | None = None  # the name the function was saved in (`load = torch.load`), if through one


def uses(ctx: Context, qualnames: frozenset[str]) -> list[Use]:
    """The calls of ``qualnames``, their ``functools.partial(f, ...)``, and the references passed as
    an argument to another call (``map(torch.load, paths)``), whose calls cannot be seen; also
    through a name the function is saved in (``_saved_in_names``). Other references (a comparison,
    an attribute set to it) are left out: what is done with them is unknown."""
    found = ctx.references_to(qualnames)
    if not found:
        return []
    aliases: dict[int, str] = {}
    for node, qualname, alias in _saved_in_names(ctx, found):
        aliases[id(node)] = alias
        found.append((node, qualname, ctx.resolver.call_of_callee(node)))
    holders: dict[int, ast.Call] = {}
    for call in ctx.resolver.calls:
        for arg in call.args:
            holders[id(arg)] = call
        for keyword in call.keywords:
            if keyword.arg is not None:
                holders[id(keyword.value)] = call
    result = []
    for node, qualname, call in found:
        alias = aliases.get(id(node))
        if call is not None:
            result.append(Use(node, qualname, call, alias=alias))
            continue
        holder = holders.get(id(node))
        if holder is None:
            continue
        holder_name = ctx.qualified_name(holder.func) or ""
        if holder_name == PARTIAL and holder.args and holder.args[0] is node:
            result.append(Use(node, qualname, holder, skip=1, alias=alias))
        elif not holder_name.startswith(MOCK_MODULES):
            result.append(Use(node, qualname, None, passed_to=holder, alias=alias))
    return result


def _saved_in_names(
    ctx: Context, found: list[tuple[ast.expr, str, ast.Call | None]]
) -> list[tuple[ast.Name, str, str]]:
    """The uses of a name that a reference was saved in (`load = torch.load`, then `load(path)`), as
    (use, qualified name, the name): only where that assignment is the name's one binding in a
    function or module scope, and no use may mean another binding (``Resolver.references``). A
    wrapper's saved original (`original = torch.load`, called with `**kwargs`) stays unreported as
    before: its calls pass what their own callers give."""
    saved = {id(node): qualname for node, qualname, call in found if call is None}
    if not saved:
        return []
    result = []
    for scope in ctx.resolver.iter_scopes():
        if scope.kind is ScopeKind.CLASS:
            continue  # (a class attribute is called as a bound method: `self.load(path)` passes self)
        for name, bindings in scope.bindings.items():
            binding = bindings[0]
            statement = binding.statement
            if (
                len(bindings) != 1
                or binding.kind is not BindingKind.ASSIGNMENT
                or binding.value is None
                or id(binding.value) not in saved
                or not (isinstance(statement, ast.Assign) and len(statement.targets) == 1)
            ):
                continue
            for reference in ctx.resolver.references(binding) or ():
                result.append((reference, saved[id(binding.value)], name))
    return result


def is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def given(call: ast.Call, parameters: dict[str, int | None], skip: int = 0, none_is_default: bool = False) -> Given:
    """Whether ``call`` passes one of ``parameters`` (name -> its position, None when keyword-only),
    after ``skip`` leading positional arguments; with ``none_is_default``, a literal ``None`` counts
    as not passed (the parameter's default is None)."""
    unknown = False
    for index, arg in enumerate(call.args[skip:]):
        if isinstance(arg, ast.Starred):
            if any(position is not None and position >= index for position in parameters.values()):
                unknown = True  # `*args` may reach a positional parameter
            break
        if index in parameters.values() and not (none_is_default and is_none(arg)):
            return Given.YES
    for keyword in call.keywords:
        if keyword.arg in parameters and not (none_is_default and is_none(keyword.value)):
            return Given.YES
        if keyword.arg is None:
            if not isinstance(keyword.value, ast.Dict):
                unknown = True
                continue
            for key, value in zip(keyword.value.keys, keyword.value.values, strict=True):
                if key is None or not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    unknown = True
                elif key.value in parameters and not (none_is_default and is_none(value)):
                    return Given.YES
    return Given.UNKNOWN if unknown else Given.NO


def none_keyword(call: ast.Call, name: str) -> ast.keyword | None:
    """``name=None`` written in ``call``."""
    return next((k for k in call.keywords if k.arg == name and is_none(k.value)), None)


def keyword_fix(ctx: Context, call: ast.Call, name: str, value: str, message: str,
                applicability: Applicability, position: int | None = None, skip: int = 0) -> Fix | None:
    """``name=value`` added as the call's last argument, or a written ``None`` for it (``name=None``,
    a ``**{"name": None}`` key, or the positional argument at ``position`` after ``skip``) given
    ``value``."""
    written = none_keyword(call, name)
    spread = literal_dict_keyword(call, name)
    index = None if position is None else skip + position
    if written is not None:
        edit = Edits(ctx.source).replace(written.value, value)
    elif spread is not None:
        edit = Edits(ctx.source).replace(spread[2], value)
    elif index is not None and index < len(call.args) and is_none(call.args[index]):
        edit = Edits(ctx.source).replace(call.args[index], value)
    else:
        edit = append_argument(ctx.source, call, f"{name}={value}")
    return Fix(message, applicability, (edit,)) if edit else None


# -- TU601 -----------------------------------------------------------------------------------------

LOAD = frozenset({"torch.load", "torch.serialization.load"})
# Code that allowlists classes for `weights_only=True` is written for 2.6's default already.
ADD_SAFE_GLOBALS = "torch.serialization.add_safe_globals"  # 2.4 and later
SAFE_GLOBALS = "torch.serialization.safe_globals"  # a context manager, 2.5 and later
PARAMETERS = {"weights_only": None, "pickle_module": 2}  # load(f, map_location, pickle_module, *, weights_only)
ADDED = "weights_only=False"
ERROR = (
    "_pickle.UnpicklingError: Weights only load failed. This file can still be loaded, to do so you have two "
    "options"
)
UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` to "
    "`True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result in "
    "arbitrary code execution. Do it only if you got the file from a trusted source."
)
HELP = (
    "keep the default where the file holds only tensors and plain containers; for your own classes, "
    "allowlist them with `torch.serialization.add_safe_globals([...])`; pass `weights_only=False` only "
    "for files you trust (unpickling can run arbitrary code)"
)


class TorchLoadWeightsOnly(Rule):
    change = Change.BEHAVES
    code = "TU601"
    name = "torch-load-weights-only"
    summary = "`torch.load` without `weights_only=` loads with `weights_only=True` since torch 2.6."
    since = "2.6"
    severity = Severity.WARNING
    fix_availability = FixAvailability.UNSAFE
    looks_for = LooksFor(names=tuple(sorted(LOAD)))
    docs = RuleDocs(
        what="""
        Finds calls of `torch.load` (also `torch.serialization.load`; any import form or alias)
        that pass neither `weights_only=` nor `pickle_module=` (by keyword, as the third
        positional argument, or as a key of a visible `**{...}` dict); a written
        `weights_only=None` is the default and is reported too. Also
        `functools.partial(torch.load, ...)` without them, and `torch.load` passed to another
        call (`map(torch.load, paths)`, `DatasetFolder(root, loader=torch.load)`), whose calls
        cannot be seen (reported without a fix). The same through a name `torch.load` is saved
        in (`load = torch.load`, then `load(path)`), where that assignment is the name's only
        binding in its function or module.

        Not reported: a call with `**options` or `*args` whose content is unknown (they may hold
        either keyword: torchup reports only what it is sure of), a call that passes
        `pickle_module=` (2.6 keeps `weights_only=False` for it, see below), the saving itself
        (`original = torch.load`, the usual start of a wrapper, which then calls
        `original(*args, **kwargs)`), a name that may also be bound to something else, `numpy.load`,
        `pickle.load`, `torch.hub.load`, `torch.jit.load`, `json.load`, `self.load(...)` and a
        project's own `load`. Nor is code already written for 2.6's default: a call inside
        `with torch.serialization.safe_globals([...]):`, and every call in a file that calls
        `torch.serialization.add_safe_globals` (it allowlists classes for `weights_only=True`;
        a call made in another module is not seen).
        """,
        why=f"""
        torch 2.6 changed the default of `weights_only` from False to True
        (torch/serialization.py in the 2.6.0 wheel: `load(..., pickle_module: Any = None, *,
        weights_only: Optional[bool] = None, ...)`, and `weights_only =
        _default_to_weights_only(pickle_module)`, which is `pickle_module is None and not
        is_fbcode`; 2.5.1 set `weights_only, warn_weights_only = False, True`). With
        `weights_only=True` the unpickler accepts only tensors, storages, primitive types,
        dicts/lists/tuples/OrderedDict and what `torch.serialization.add_safe_globals`
        allowlists. A checkpoint holding anything else (an `argparse.Namespace`, a model
        object, a class of yours, a numpy array) now fails:

            {ERROR} ... (1) {UNSAFE_MESSAGE}

        A state dict of tensors loads as before. 2.4 and 2.5 announced the change with a
        FutureWarning on each such call ("You are using `torch.load` with `weights_only=False`
        (the current default value) ..."; 2.4.1 and 2.5.1 wheels). The environment variable
        `TORCH_FORCE_WEIGHTS_ONLY_LOAD=1` (every 2.x release) forces True even over an explicit
        False; `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1` (2.6 and later) restores False, but only for
        calls that do not pass `weights_only`.
        """,
        fix="""
        `--unsafe-fixes` adds `weights_only=False` as the call's (or the partial's) last argument
        (a written `weights_only=None` becomes `False`), which loads exactly as torch 2.5 did.
        The better fix, where you can: keep `weights_only=True` and allowlist the classes the file
        holds with `torch.serialization.add_safe_globals([MyConfig])` (or the
        `torch.serialization.safe_globals([...])` context manager), or pass `weights_only=True`
        where the file holds only tensors, which also silences this rule. torchup offers
        `weights_only=True` itself only where the code shows what the file holds: the loaded
        object goes straight to `load_state_dict(...)`, which takes a state dict of tensors
        (`model.load_state_dict(torch.load(path, weights_only=True))`, the same on 2.6 and later,
        and safe on older releases too); elsewhere what a file holds is not visible in the code.
        """,
        fix_safety="""
        Unsafe: `weights_only=False` unpickles with the full `pickle` module, which can run
        arbitrary code from a malicious file; 2.6 changed the default precisely to prevent that.
        The behaviour is torch 2.5's exactly (same branch of `torch.load`, checked on the 2.5.1
        and 2.6.0 wheels and by the examples below, original under 2.5, fix under 2.14), so apply
        it only to files you trust. Every 2.x release takes the keyword (2.0.1: `weights_only: bool =
        False`), so the fixed code still runs on all of them.
        """,
        wheels_vs_notes="""
        The change is announced as "the default of `weights_only` is now True"; the wheels add
        that it did not change for a call with an explicit `pickle_module=` (even
        `pickle_module=pickle`): 2.6's default is `pickle_module is None` (and False inside
        Meta's fbcode builds), so such calls behave as before and are not reported.
        """,
    )
    examples = (
        Example(
            "a checkpoint with an argparse.Namespace",
            """
            import argparse
            import tempfile
            import torch

            with tempfile.NamedTemporaryFile(suffix=".pt") as file:
                torch.save({"args": argparse.Namespace(lr=0.5), "weight": A}, file.name)
                checkpoint = torch.load(file.name, map_location="cpu")
            lr = checkpoint["args"].lr
            weight = checkpoint["weight"]
            """,
            fixed="""
            import argparse
            import tempfile
            import torch

            with tempfile.NamedTemporaryFile(suffix=".pt") as file:
                torch.save({"args": argparse.Namespace(lr=0.5), "weight": A}, file.name)
                checkpoint = torch.load(file.name, map_location="cpu", weights_only=False)
            lr = checkpoint["args"].lr
            weight = checkpoint["weight"]
            """,
            unsafe=True,
            versions=("2.5", "2.14"),
        ),
        Example(
            "a partial, a from-import, and torch.serialization",
            """
            import argparse
            import functools
            import io
            import torch.serialization
            from torch import load as load_checkpoint

            buffer = io.BytesIO()
            torch.save({"args": argparse.Namespace(steps=3), "weight": A}, buffer)
            read = functools.partial(torch.serialization.load, map_location="cpu")
            steps = read(io.BytesIO(buffer.getvalue()))["args"].steps
            weight = load_checkpoint(io.BytesIO(buffer.getvalue()))["weight"]
            """,
            fixed="""
            import argparse
            import functools
            import io
            import torch.serialization
            from torch import load as load_checkpoint

            buffer = io.BytesIO()
            torch.save({"args": argparse.Namespace(steps=3), "weight": A}, buffer)
            read = functools.partial(torch.serialization.load, map_location="cpu", weights_only=False)
            steps = read(io.BytesIO(buffer.getvalue()))["args"].steps
            weight = load_checkpoint(io.BytesIO(buffer.getvalue()), weights_only=False)["weight"]
            """,
            findings=2,
            unsafe=True,
            versions=("2.5", "2.14"),
        ),
        Example(
            "a state dict handed to load_state_dict: weights_only=True says what it holds",
            """
            import io
            import torch

            buffer = io.BytesIO()
            torch.save({"weight": A.detach().clone()}, buffer)
            buffer.seek(0)
            module = torch.nn.Module()
            module.register_buffer("weight", torch.empty_like(A.detach()))
            module.load_state_dict(torch.load(buffer))
            weight = module.weight
            """,
            fixed="""
            import io
            import torch

            buffer = io.BytesIO()
            torch.save({"weight": A.detach().clone()}, buffer)
            buffer.seek(0)
            module = torch.nn.Module()
            module.register_buffer("weight", torch.empty_like(A.detach()))
            module.load_state_dict(torch.load(buffer, weights_only=True))
            weight = module.weight
            """,
            unsafe=True,
            executable=False,  # (no change to show on 2.14: tests/test_differential.py runs it on both releases)
        ),
        Example(
            "passed on: reported, no fix",
            """
            import torch

            def load_all(paths):
                return list(map(torch.load, paths))
            """,
        ),
        Example(
            "not reported: already explicit, pickle_module, unknown options, other loaders",
            """
            import json
            import pickle
            import numpy as np
            import torch

            def restore(path, options, model):
                state = torch.load(path, weights_only=True)
                legacy = torch.load(path, map_location="cpu", weights_only=False)
                custom = torch.load(path, pickle_module=pickle)
                spread = torch.load(path, **options)
                original = torch.load
                hub = torch.hub.load("pytorch/vision", "resnet18")
                scripted = torch.jit.load(path)
                array = np.load(path)
                with open(path) as f:
                    config = json.load(f)
                return state, legacy, custom, spread, original, hub, scripted, array, config, model.load(path)
            """,
            findings=0,
        ),
    )

    def focus_lines(self, text: str) -> list[int]:
        """The lines spelling `safe_globals` (`add_safe_globals` too): their bodies are read."""
        if "safe_globals" not in text:
            return []
        return [number for number, line in enumerate(text.splitlines(), 1) if "safe_globals" in line]

    def may_report(self, spans: Spans[str] | Spans[bytes]) -> bool:
        # (torch's own sources call `torch.load(..., weights_only=True)` in files nothing else is found in)
        return super().may_report(spans) and not every_call_passes(
            spans, self.triggers, frozenset(PARAMETERS), self.name_requirements
        )

    def check(self, ctx: Context) -> None:
        if "safe_globals" in ctx.source.text and ctx.references_to(frozenset({ADD_SAFE_GLOBALS})):
            return  # the file allowlists classes for `weights_only=True`: it expects 2.6's default
        allowlisted: list[tuple[int, int]] | None = None  # (a walk of the tree: only once a use needs it)
        outer_calls: dict[int, ast.Call] | None = None  # (likewise)
        for use in uses(ctx, LOAD):
            if use.call is not None and given(use.call, PARAMETERS, use.skip, none_is_default=True) is not Given.NO:
                continue
            if allowlisted is None:
                allowlisted = _allowlisted(ctx)
            start, end = ctx.source.node_range(use.node)
            if any(outer_start <= start and end <= outer_end for outer_start, outer_end in allowlisted):
                continue
            name = f"`{use.qualname}`" + (f" (saved as `{use.alias}`)" if use.alias else "")
            if use.call is None:
                ctx.report(
                    use.node,
                    f"{name} passed on: the calls made through it get `weights_only=True` by default since torch 2.6, "
                    "and fail on files holding anything but tensors and plain containers",
                    help="wrap it as `functools.partial(torch.load, weights_only=...)`; " + HELP,
                )
                continue
            if outer_calls is None:
                outer_calls = _outer_calls(ctx)
            if _loads_a_state_dict(use.call, outer_calls):
                fix = keyword_fix(ctx, use.call, "weights_only", "True",
                                  "pass `weights_only=True` (2.6's default: a state dict of tensors loads the same)",
                                  Applicability.UNSAFE)
            else:
                fix = keyword_fix(ctx, use.call, "weights_only", "False",
                                  "pass `weights_only=False` (torch 2.5's default; unsafe for untrusted files)",
                                  Applicability.UNSAFE)
            through = " through `functools.partial`" if use.skip else ""
            ctx.report(
                use.node,
                f"{name}{through} without `weights_only=` loads with `weights_only=True` since torch 2.6: a file "
                "holding anything but tensors and plain containers (a Namespace, a class of yours) raises "
                "UnpicklingError",
                help=HELP,
                fix=fix,
            )


def _loads_a_state_dict(call: ast.Call, outer_calls: dict[int, ast.Call]) -> bool:
    """Is the loaded object handed straight to a `load_state_dict(...)` (`model.load_state_dict(
    torch.load(path))`)? A state dict of tensors is what `weights_only=True` loads; saying so keeps
    the new default's safety on every release, where `weights_only=False` would give it up.
    ``outer_calls``: the call each call is an argument of (``_outer_calls``)."""
    outer = outer_calls.get(id(call))
    return outer is not None and isinstance(outer.func, ast.Attribute) and outer.func.attr == "load_state_dict"


def _outer_calls(ctx: Context) -> dict[int, ast.Call]:
    """For each positional argument of a call the file makes (by id), that call: one pass, not one
    per finding (a file of 40,000 loads took minutes)."""
    return {id(argument): outer for outer in reversed(ctx.resolver.calls) for argument in outer.args}


def _allowlisted(ctx: Context) -> list[tuple[int, int]]:
    """The `with torch.serialization.safe_globals(...)` blocks, where a load is allowlisted."""
    if "safe_globals" not in ctx.source.text:
        return []
    return [
        ctx.source.node_range(node) for node in ctx.walk()
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(
            isinstance(item.context_expr, ast.Call)
            and ctx.qualified_name(item.context_expr.func) == SAFE_GLOBALS for item in node.items
        )
    ]

RULE = TorchLoadWeightsOnly()
