"""TU616: ``torch.hub.load``/``list``/``help`` of a repository outside torch's trusted owners, without
``trust_repo=``: since torch 2.11 the call asks for confirmation on standard input."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Severity
from torchup.prefilter.requirements import NameRequirements
from torchup.rules.tu601_torch_load_weights_only import Given, given, keyword_fix, uses

# Where each function takes `trust_repo` (None: keyword-only).
TRUST_REPO = {"torch.hub.load": None, "torch.hub.list": 3, "torch.hub.help": 4}
# torch/hub.py `_TRUSTED_REPO_OWNERS` (2.11.0 to 2.15.0): repositories of these owners never ask.
TRUSTED_OWNERS = frozenset({"facebookresearch", "facebookincubator", "pytorch", "fairinternal"})


class HubTrustRepo(Rule):
    code = "TU616"
    name = "hub-trust-repo-check"
    summary = "`torch.hub.load(\"owner/repo\", ...)` without `trust_repo=`: since torch 2.11 it asks on stdin."
    since = "2.11"
    change = Change.BEHAVES
    severity = Severity.WARNING
    fix_availability = FixAvailability.UNSAFE
    # The last words of `list` and `help` stand in most files (`list` in 1,733 of transformers' 2,951):
    # as trigger words, every one of those files would leave grep for Python's pre-filter (+20% on a
    # cold check, bench/RESULTS.md, session 7). Their calls spell the module's word instead, `hub`
    # (`torch.hub.list(...)`, `hub.list(...)`): 75 files. `load` is TU601's word already.
    looks_for = LooksFor(names=("torch.hub.load",), words=("hub",))
    reported_names = ("torch.hub.help", "torch.hub.list")
    # The word `hub` stands in any file, transformers' own `from .utils.hub import ...` included; a
    # finding needs a reference to one of the three functions: with that, TU616 alone parses none of
    # transformers' 2,951 files (the word alone cost a cold check 16% of its CPU time).
    name_requirements = NameRequirements(tuple(sorted(TRUST_REPO)))
    docs = RuleDocs(
        what="""
        Finds calls of `torch.hub.load`, `torch.hub.list` and `torch.hub.help` (any import form)
        whose repository is a string literal `"owner/name"` (or `"owner/name:ref"`) of an owner
        torch does not trust by itself (all but `facebookresearch`, `facebookincubator`,
        `pytorch` and `fairinternal`), that pass no `trust_repo=` and no `source="local"`.

        Not reported: a repository given by a variable (its owner is unknown here), a local
        directory, and a call that passes `trust_repo` (any value, `None` included: only the
        default asks) or `**options`, and `list` or `help` imported on its own and called inside a
        function (`from torch.hub import list as hub_list`: the pre-filter reads the bodies that
        spell `hub` or `load`).
        """,
        why="""
        Up to torch 2.10 `trust_repo` defaulted to `None`: an untrusted repository was downloaded
        and run, with a warning that a future release would ask. torch 2.11 made the default
        `"check"`: unless the repository is in `$TORCH_HOME/hub/trusted_list` or was downloaded
        before, the call asks "Do you trust this repository ... (y/N)?" with `input()`. An
        interactive run stops there; a job without a terminal (CI, a batch script, a container)
        gets `EOFError: EOF when reading a line`, and an empty answer raises `Exception: Untrusted
        repository.` Code that ran unattended on 2.10 fails on a fresh machine.
        """,
        fix="""
        Adds `trust_repo=True`, which downloads and runs the repository without asking, as the
        old default did (and records it in the trusted list).
        """,
        fix_safety="""
        Unsafe: trusting a repository is a decision about running its code; the fix takes it for
        you. Alternatively keep the default and add `owner_name` to `$TORCH_HOME/hub/trusted_list`
        on the machines that run the code.
        """,
        wheels_vs_notes="""
        Evidence: torch-2.11.0 torch/hub.py:459, 526, 576 (`trust_repo="check"`, `None` in 2.10);
        torch-2.14.1 torch/hub.py:350-385 (`_check_repo_is_trusted`: `input()` where the owner is
        not trusted and the repository neither listed nor cached). Run on 2.13.0 with an empty
        `TORCH_HOME` and stdin from /dev/null: `EOFError`. Not run against GitHub (no network here).
        """,
    )
    examples = (
        Example(
            "a model from a third-party repository",
            """
            import torch

            model = torch.hub.load("ultralytics/yolov5", "yolov5s", force_reload=True)
            """,
            fixed="""
            import torch

            model = torch.hub.load("ultralytics/yolov5", "yolov5s", force_reload=True, trust_repo=True)
            """,
            unsafe=True,
            executable=False,  # (downloads from GitHub)
        ),
        Example(
            "a branch, and the module imported alone",
            """
            import torch.hub as hub

            names = hub.list("ultralytics/yolov5:master")
            """,
            fixed="""
            import torch.hub as hub

            names = hub.list("ultralytics/yolov5:master", trust_repo=True)
            """,
            unsafe=True,
            executable=False,  # (downloads from GitHub)
        ),
        Example(
            "not reported: trusted owners, a local directory, a decision made, an unknown repository",
            """
            import torch

            def build(repo, options):
                torch.hub.load("pytorch/vision", "resnet18")
                torch.hub.load("facebookresearch/dino:main", "dino_vits16")
                torch.hub.load("./checkpoints/yolo", "custom", source="local")
                torch.hub.load("ultralytics/yolov5", "yolov5s", trust_repo=True)
                torch.hub.list("ultralytics/yolov5", False, True, "check")
                torch.hub.load(repo, "model")
                torch.hub.load("ultralytics/yolov5", "yolov5s", **options)
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        for use in uses(ctx, frozenset(TRUST_REPO)):
            call = use.call
            if call is None:
                continue
            owner = _untrusted_owner(call, use.skip)
            position = TRUST_REPO[use.qualname]
            if owner is None or _local(call) or given(call, {"trust_repo": position}, use.skip) is not Given.NO:
                continue
            function = use.qualname.rpartition(".")[2]
            fix = keyword_fix(ctx, call, "trust_repo", "True",
                              "pass `trust_repo=True` (you trust the repository's code)", Applicability.UNSAFE)
            ctx.report(
                use.node,
                f"`torch.hub.{function}` of `{owner}`'s repository without `trust_repo=`: since torch 2.11 it "
                "asks for confirmation on stdin (an interactive run waits; a job without a terminal fails with "
                "EOFError) unless the repository is listed or cached",
                help="pass `trust_repo=True` if you trust it, or add it to $TORCH_HOME/hub/trusted_list",
                fix=fix,
            )


def _untrusted_owner(call: ast.Call, skip: int) -> str | None:
    """The owner of a literal `"owner/name[:ref]"` repository that torch does not trust by itself."""
    keyword = next((k.value for k in call.keywords if k.arg in ("repo_or_dir", "github")), None)
    repo = keyword if keyword is not None else call.args[skip] if len(call.args) > skip else None
    if not (isinstance(repo, ast.Constant) and isinstance(repo.value, str)):
        return None
    owner, slash, name = repo.value.partition("/")
    if not slash or not owner or not name or "/" in name.partition(":")[0] or owner.startswith("."):
        return None  # (a path: `./models/yolo`, `/abs/dir`, `a/b/c`)
    return None if owner in TRUSTED_OWNERS else owner


def _local(call: ast.Call) -> bool:
    """Does the call pass `source=` other than a literal "github" (a local directory, or unknown)?"""
    source = next((k.value for k in call.keywords if k.arg == "source"), None)
    return source is not None and not (isinstance(source, ast.Constant) and source.value == "github")


RULE = HubTrustRepo()
