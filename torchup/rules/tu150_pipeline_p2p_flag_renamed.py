"""TU150: ``torch.distributed.config.pipeline_per_direction_p2p`` is ``pipeline_per_edge_p2p`` in torch 2.15."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits
from torchup.analysis.rule import Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Edit, Fix, Severity
from torchup.core.facts import FACTS
from torchup.rules._arguments import (
    attributes_named,
    from_imports,
    rename_attribute,
    rename_imported_name,
    rename_string,
)

FLAG = "torch.distributed.config.pipeline_per_direction_p2p"  # noqa: TU150 (the name this rule looks for)
_FACTS = FACTS["renamed"][FLAG]
CONFIG, _, OLD = FLAG.rpartition(".")
NEW = _FACTS["new_name"].rpartition(".")[2]
OLD_ENV, NEW_ENV = _FACTS["env"], _FACTS["new_env"]
ERROR = _FACTS["error"]
# Calls of the config module's own methods that take flag names as strings or keywords.
CONFIG_CALLS = frozenset({f"{CONFIG}.patch", f"{CONFIG}.load_config"})
# Built-ins that take the flag's name after the module only to read it (or delete it).
READING_BUILTINS = ("getattr", "hasattr", "delattr")
MESSAGE = f"`{FLAG}` is `{NEW}` in torch 2.15; the old name raises AttributeError"
ENV_MESSAGE = f"torch 2.15 reads `{NEW_ENV}`, not `{OLD_ENV}`: setting this variable has no effect there"


def _applicability(value: ast.expr | None) -> Applicability:
    """Safe where the flag is read, or set to False; unsafe where it may switch split P2P on."""
    if value is None or (isinstance(value, ast.Constant) and value.value is False):
        return Applicability.SAFE
    return Applicability.UNSAFE


def _fix(edit: Edit | None, value: ast.expr | None, what: str = f"rename to `{NEW}`") -> Fix | None:
    # (the flag's new name, also where it is a string or a keyword of the config module's own methods,
    # which the engine does not read as a name: torchup.analysis.fix_window)
    return Fix(what, _applicability(value), (edit,), requires=(f"{CONFIG}.{NEW}",)) if edit is not None else None


class _Assignments:
    """The value a plain assignment writes to each of its targets (``x.flag = value``)."""

    def __init__(self, ctx: Context) -> None:
        self.values: dict[int, ast.expr] = {}
        for node in ctx.walk():  # (the assignments of interest spell the trigger word)
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    self.values[id(target)] = node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                self.values[id(node.target)] = node.value

    def value(self, target: ast.Attribute) -> ast.expr:
        """What is written; the target itself (unknown, so the fix is unsafe) for ``|=``, tuples, loops."""
        return self.values.get(id(target), target)


def _call_arguments(ctx: Context) -> dict[int, ast.expr]:
    """For each positional argument that has another after it, that next argument (by ``id``),
    in the calls that span a line spelling a trigger word."""
    following: dict[int, ast.expr] = {}
    for node in ctx.walk():
        if isinstance(node, ast.Call):
            for argument, after in zip(node.args, node.args[1:], strict=False):
                following[id(argument)] = after
    return following


class PipelineP2PFlagRenamed(Rule):
    code = "TU150"
    name = "pipeline-p2p-flag-renamed"
    summary = f"`{FLAG}` is `{NEW}` in torch 2.15 (AttributeError); its variable `{OLD_ENV}` is ignored."
    since = "2.15"
    fix_availability = FixAvailability.SOMETIMES
    # `mock.patch("torch.distributed.config.<flag>", ...)`: the flag ends a dotted path
    looks_for = LooksFor(in_strings=(OLD, OLD_ENV))
    docs = RuleDocs(
        what=f"""
        Finds the pipeline-parallel P2P flag of torch 2.14 under its old name: reads, writes and
        `del` of `torch.distributed.config.{OLD}` (any import form of the config module),
        `from torch.distributed.config import {OLD}`, the name given to the config module's
        `patch(...)` and `load_config(...)` (keyword, string or dict key), the string given
        right after the config module to any call (`getattr`/`setattr`/`hasattr`/`delattr`,
        `mock.patch.object(config, ...)`, pytest's `monkeypatch.setattr(config, ...)`), the
        dotted path `"{FLAG}"`
        (`mock.patch("...")`), and the string `"{OLD_ENV}"` anywhere
        (the environment variable that sets the flag's default).
        """,
        why=f"""
        torch 2.14 added `{OLD}`: pipeline stages carry downstream (r -> r+1) and upstream
        (r -> r-1) P2P "on two separate communicators instead of sharing one". torch 2.15 replaces
        it with `{NEW}`: "each adjacent directed physical-rank edge uses a separate
        communicator". The config module rejects unknown names, so every read, write and `patch`
        of the old one fails:

            {ERROR}

        `load_config({{"{OLD}": ...}})` only warns ("key ... is not understood by this config")
        and drops the setting, and torch 2.15 reads `{NEW_ENV}` instead of `{OLD_ENV}`, so the
        old variable is silently ignored.
        """,
        fix=f"""
        Rename `{OLD}` to `{NEW}` (the attribute, the keyword, the string or dict key, the name
        before `as` in a `from` import, the last part of the dotted path) and `{OLD_ENV}` to
        `{NEW_ENV}`. A `from` import without
        `as` is reported only: the names that use it would need renaming too. Code that must run
        on 2.14 and 2.15 has to pick the name at run time
        (`hasattr(torch.distributed.config, "{NEW}")`).
        """,
        fix_safety="""
        Both flags are `bool`, default `False`, settable from the environment, and force-enable
        the split-communicator P2P path that TorchComms turns on anyway; with the flag off both
        releases send every P2P operation over the stage's own group. So a rename is safe where
        the flag is read, deleted or set to a literal `False`. Where it may be set to `True` (a
        literal `True`, any expression, a patch without a value, the environment variable) the
        rename is unsafe: 2.15 then
        creates one two-rank communicator per directed rank edge, at schedule initialisation, where
        2.14 split the stage group into two (downstream and upstream): a finer split (opposite
        directions and distinct rank pairs isolated), more communicators, a different setup cost.
        """,
        wheels_vs_notes=f"""
        The release notes mention only the attribute rename. The 2.15.0 sources also rename the
        environment variable (`{OLD_ENV}` -> `{NEW_ENV}`; the old one is ignored, with no
        warning) and change what the flag does: per directed rank edge
        (`torch/distributed/pipelining/_p2p.py`), not per direction. The flag itself is new in
        2.14: torch 2.13.0 has neither name.
        """,
    )
    examples = (
        Example(
            "reads and writes of the config attribute",
            f"""
            import torch.distributed.config as dist_config

            dist_config.{OLD} = False
            if dist_config.{OLD}:
                print("split P2P forced on")
            """,
            fixed=f"""
            import torch.distributed.config as dist_config

            dist_config.{NEW} = False
            if dist_config.{NEW}:
                print("split P2P forced on")
            """,
            findings=2,
            executable=False,
        ),
        Example(
            "switching it on, and patch(): unsafe",
            f"""
            import torch
            import torch.distributed

            torch.distributed.config.{OLD} = True
            with torch.distributed.config.patch({OLD}=True):
                pass
            with torch.distributed.config.patch("{OLD}", True):
                pass
            """,
            fixed=f"""
            import torch
            import torch.distributed

            torch.distributed.config.{NEW} = True
            with torch.distributed.config.patch({NEW}=True):
                pass
            with torch.distributed.config.patch("{NEW}", True):
                pass
            """,
            findings=3,
            unsafe=True,
            executable=False,
        ),
        Example(
            "the environment variable: unsafe",
            f"""
            import os

            os.environ["{OLD_ENV}"] = "1"
            """,
            fixed=f"""
            import os

            os.environ["{NEW_ENV}"] = "1"
            """,
            unsafe=True,
            executable=False,
        ),
        Example(
            "a from import: reported, fixed only with `as`",
            f"""
            from torch.distributed.config import {OLD}
            from torch.distributed.config import {OLD} as per_direction
            """,
            fixed=f"""
            from torch.distributed.config import {OLD}
            from torch.distributed.config import {NEW} as per_direction
            """,
            findings=2,
            executable=False,
        ),
        Example(
            "not reported: another object's attribute, and the 2.15 name",
            f"""
            import torch.distributed.config as dist_config

            class Options:
                {OLD} = False

            Options.{OLD} = True
            enabled = dist_config.{NEW}
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        dotted = _call_arguments(ctx)
        for node in ctx.walk():
            if isinstance(node, ast.Constant) and node.value == OLD_ENV:
                fix = _fix(rename_string(ctx.source, node, NEW_ENV), node, f"use `{NEW_ENV}`")
                ctx.report(node, ENV_MESSAGE, severity=Severity.WARNING, fix=fix,
                           help=None if fix else f"set `{NEW_ENV}` instead")
            elif isinstance(node, ast.Constant) and node.value == FLAG:
                # `mock.patch("torch.distributed.config.<old>", value)`: the value follows the path.
                fix = _fix(rename_string(ctx.source, node, f"{CONFIG}.{NEW}"), dotted.get(id(node), node))
                ctx.report(node, MESSAGE, fix=fix, help=None if fix else f'use "{CONFIG}.{NEW}"')
        if not ctx.resolver.imports_torch:
            return
        assignments = _Assignments(ctx)
        for node in attributes_named(ctx, OLD):
            if ctx.qualified_name(node) == FLAG:
                value = assignments.value(node) if isinstance(node.ctx, ast.Store) else None
                ctx.report(node, MESSAGE, fix=_fix(rename_attribute(ctx.source, node, NEW), value))
        for alias, _ in from_imports(ctx.resolver, frozenset({FLAG})):
            edit = rename_imported_name(ctx.source, alias, NEW) if alias.asname else None
            ctx.report(alias, f"{MESSAGE} (ImportError here)", fix=_fix(edit, None),
                       help=None if edit else f"import `{NEW}` and rename its uses")
        for call, _ in ctx.calls_to(CONFIG_CALLS):
            self._config_call(ctx, call)
        for call in ctx.resolver.calls:
            # The module followed by the name: getattr/setattr/hasattr/delattr, `mock.patch.object(...)`,
            # pytest's `monkeypatch.setattr(...)`, ... The value set, if any, comes next.
            for position, argument in enumerate(call.args[:-1]):
                name = call.args[position + 1]
                if not (isinstance(name, ast.Constant) and name.value == OLD) \
                        or ctx.qualified_name(argument) != CONFIG:
                    continue
                reads = isinstance(call.func, ast.Name) and call.func.id in READING_BUILTINS \
                    and ctx.resolver.is_unbound(call.func.id, ctx.scope_of(call))
                given = call.args[position + 2] if len(call.args) > position + 2 else name
                self._string(ctx, name, None if reads else given)

    def _config_call(self, ctx: Context, call: ast.Call) -> None:
        """``patch(old=v)``, ``patch("old", v)``, ``patch({"old": v})``, ``patch(**{"old": v})``."""
        for keyword in call.keywords:
            if keyword.arg == OLD:
                edit = Edits(ctx.source).rename_keyword(keyword, NEW)
                ctx.report(keyword, MESSAGE, fix=_fix(edit, keyword.value))
            elif keyword.arg is None and isinstance(keyword.value, ast.Dict):
                self._dict(ctx, keyword.value)
        if call.args and isinstance(call.args[0], ast.Dict):
            self._dict(ctx, call.args[0])
        elif call.args:
            self._string(ctx, call.args[0], call.args[1] if len(call.args) > 1 else call.args[0])

    def _dict(self, ctx: Context, mapping: ast.Dict) -> None:
        for key, value in zip(mapping.keys, mapping.values, strict=True):
            if key is not None:
                self._string(ctx, key, value)

    def _string(self, ctx: Context, node: ast.expr, value: ast.expr | None) -> None:
        if isinstance(node, ast.Constant) and node.value == OLD:
            fix = _fix(rename_string(ctx.source, node, NEW), value)
            ctx.report(node, MESSAGE, fix=fix, help=None if fix else f'use "{NEW}"')


RULE = PipelineP2PFlagRenamed()
