"""TU617: torchelastic's log settings (``log_dir``, ``redirects``, ``tee``) passed the way of torch 2.2,
before 2.3 gathered them into one ``logs_specs`` argument."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.patterns import is_super_init
from torchup.analysis.rule import Change, Example, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Severity
from torchup.rules.tu601_torch_load_weights_only import uses

WORKER_SPEC = frozenset({"torch.distributed.elastic.agent.server.WorkerSpec",
                         "torch.distributed.elastic.agent.server.api.WorkerSpec"})
START_PROCESSES = frozenset({"torch.distributed.elastic.multiprocessing.start_processes"})
AGENT = frozenset({"torch.distributed.elastic.agent.server.local_elastic_agent.LocalElasticAgent"})
GONE = {"WorkerSpec": ("redirects", "tee"), "start_processes": ("log_dir", "redirects", "tee"),
        "LocalElasticAgent": ("log_dir",)}
ADVICE = ("pass `logs_specs=DefaultLogsSpecs(log_dir=..., redirects=..., tee=...)` "
          "(torch.distributed.elastic.multiprocessing)")


class ElasticLogsSpecs(Rule):
    code = "TU617"
    name = "elastic-logs-specs"
    summary = "torchelastic's `log_dir`/`redirects`/`tee` arguments are gone since torch 2.3: one `logs_specs=`."
    since = "2.3"
    change = Change.RAISES
    severity = Severity.ERROR
    looks_for = LooksFor(names=tuple(sorted(WORKER_SPEC | START_PROCESSES | AGENT)))
    docs = RuleDocs(
        what="""
        Finds the calls of torchelastic that launchers and custom agents make the 2.2 way:
        `WorkerSpec(..., redirects=, tee=)`; `start_processes(..., log_dir=, redirects=, tee=)`
        or with a log directory fifth (a string, or a name of a directory: it was `log_dir`);
        `LocalElasticAgent(...)` (and
        `super().__init__(...)` in a direct subclass) with `log_dir=`, without `logs_specs`, or
        with a second positional argument written as the old `start_method` (a string, or a
        name `start_method`).

        Not reported: calls that pass `logs_specs`, and the agents torchrun builds itself.
        """,
        why="""
        torch 2.3 moved the workers' log settings out of `WorkerSpec` and the process starters into
        a `LogsSpecs` object (`DefaultLogsSpecs(log_dir=None, redirects=Std.NONE, tee=Std.NONE)`),
        which `start_processes` and `LocalElasticAgent` take as a new required argument, second
        after the spec for the agent. The old keywords raise `TypeError: ... got an unexpected
        keyword argument 'redirects'`; an agent built `LocalElasticAgent(spec, "spawn")` binds
        the start method to `logs_specs` and fails when it starts workers. DeepSpeed's elastic
        launcher was written this way.
        """,
        fix="""
        None automatic: the settings move from the spec to the agent (`WorkerSpec` keeps none), so
        the rewrite spans two calls. Build one `DefaultLogsSpecs(log_dir=..., redirects=...,
        tee=...)` and pass it as `logs_specs=` to `LocalElasticAgent` or `start_processes`.
        """,
        fix_safety="None: reported only.",
        wheels_vs_notes="""
        Evidence: api_changes.json, 2.3 (torch-2.3.1 torch/distributed/elastic/agent/server/api.py:
        WorkerSpec without redirects/tee; multiprocessing/__init__.py: start_processes(name,
        entrypoint, args, envs, logs_specs, ...); agent/server/local_elastic_agent.py:
        __init__(self, spec, logs_specs, start_method="spawn", ...)). Signatures confirmed on 2.13.0.
        """,
    )
    examples = (
        Example(
            "a launcher and its agent, written for torch 2.2",
            """
            from torch.distributed.elastic.agent.server.api import WorkerSpec
            from torch.distributed.elastic.agent.server.local_elastic_agent import LocalElasticAgent
            from torch.distributed.elastic.multiprocessing import Std, start_processes

            class MyAgent(LocalElasticAgent):
                def __init__(self, spec, start_method="spawn", exit_barrier_timeout=300, log_dir=None):
                    super().__init__(spec, start_method, exit_barrier_timeout, log_dir)

                def _start_workers(self, worker_group):
                    return start_processes(name="w", entrypoint=self.fn, args={}, envs={},
                                           log_dir=self.log_dir, redirects=Std.NONE, tee=Std.NONE)

            def launch(handler, fn):
                spec = WorkerSpec(role="trainer", local_world_size=2, rdzv_handler=handler, fn=fn,
                                  redirects=Std.ALL, tee=Std.NONE)
                return MyAgent(spec)
            """,
            findings=3,
        ),
        Example(
            "not reported: logs_specs given",
            """
            from torch.distributed.elastic.agent.server.api import WorkerSpec
            from torch.distributed.elastic.agent.server.local_elastic_agent import LocalElasticAgent
            from torch.distributed.elastic.multiprocessing import DefaultLogsSpecs, Std

            def launch(handler, fn, logs):
                spec = WorkerSpec(role="trainer", local_world_size=2, rdzv_handler=handler, fn=fn)
                agent = LocalElasticAgent(spec, DefaultLogsSpecs(log_dir=logs, redirects=Std.ALL))
                return LocalElasticAgent(spec, logs_specs=DefaultLogsSpecs(), start_method="fork"), agent
            """,
            findings=0,
        ),
    )

    def focus_lines(self, text: str) -> list[int]:
        # A subclass's `super().__init__(...)` spells no agent name: keep the `__init__` lines.
        if "LocalElasticAgent" not in text:
            return []
        return [number for number, line in enumerate(text.splitlines(), 1) if "__init__" in line]

    def check(self, ctx: Context) -> None:
        for use in uses(ctx, WORKER_SPEC | START_PROCESSES | AGENT):
            if use.call is None:
                continue
            short = use.qualname.rpartition(".")[2]
            self._check_call(ctx, use.node, use.call, use.skip, short)
        for cls in ctx.walk():
            if isinstance(cls, ast.ClassDef) and [ctx.qualified_name(b) for b in cls.bases] == [next(iter(AGENT))]:
                for call in (n for n in ast.walk(cls) if isinstance(n, ast.Call) and is_super_init(n)):
                    self._check_call(ctx, call.func, call, 0, "LocalElasticAgent")

    def _check_call(self, ctx: Context, node: ast.expr, call: ast.Call, skip: int, short: str) -> None:
        given = {k.arg for k in call.keywords}
        if None in given or any(isinstance(a, ast.Starred) for a in call.args):
            return  # (`**options`, `*args`: what they pass is unknown)
        gone = [word for word in GONE[short] if word in given]
        positional = call.args[skip:]
        why = ""
        if gone:
            why = f"passes {', '.join(f'`{w}=`' for w in gone)} (TypeError)"
        elif short == "start_processes" and len(positional) >= 5 and _old_log_dir(positional[4]):
            why = "passes a log directory fifth, where `logs_specs` now stands"
        elif short == "LocalElasticAgent" and "logs_specs" not in given:
            if len(positional) < 2:
                why = "passes no `logs_specs`, a required argument (TypeError)"
            elif _old_start_method(positional[1]):
                why = "passes the start method second, where `logs_specs` now stands"
        if why:
            ctx.report(node, f"`{short}(...)` {why}: since torch 2.3 the log settings are one `logs_specs` argument",
                       help=ADVICE)


def _old_log_dir(node: ast.expr) -> bool:
    """The fifth argument of `start_processes` written as 2.2's `log_dir`: a string, or a name of a
    directory (`log_dir`, `attempt_log_dir`); anything else may be the new `logs_specs`."""
    if isinstance(node, (ast.Constant, ast.JoinedStr)):
        return isinstance(node, ast.JoinedStr) or isinstance(node.value, str)
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return "dir" in name


def _old_start_method(node: ast.expr) -> bool:
    """The agent's second argument written as 2.2's `start_method`: a string, or a name so called."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return name == "start_method"


RULE = ElasticLogsSpecs()
