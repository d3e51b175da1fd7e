"""TU605, TU607-TU610: deprecations on the way from torch 2.0 (set_default_tensor_type, weight_norm,
assert_allclose, the LR schedulers' verbose, the upsample functions): import forms, look-alikes,
tricky calls.

Each fix goes through the engine (``helpers.fix``: the result parses and a second pass changes
nothing). The facts the rules keep as constants are checked against the wheels by a maintainer
command (tools/check_rule_facts.py: tests read nothing outside the repository), and TU608's unsafe
case is run to show the difference it warns of.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from differential.envs import ensure_env
from helpers import check, fix
from torchup.analysis.rule import Change
from torchup.core.diagnostics import Applicability
from torchup.rules import rule_by_code

PROBE = Path(__file__).parent / "differential" / "probe.py"


def found(code: str, source: str, prefilter: bool = True) -> list[tuple[int, Applicability | None]]:
    """(line, fix applicability) of each finding of ``code``."""
    return [
        (d.line, d.fix.applicability if d.fix else None)
        for d in check(source, select=[code], prefilter=prefilter)
        if d.code == code
    ]


def fixed(code: str, source: str, unsafe: bool = False) -> str:
    return fix(textwrap.dedent(source), unsafe=unsafe, select=[code])


# -- the rules' identity ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "since", "change"),
    [
        ("TU605", "2.1", Change.WARNS),
        ("TU607", "2.1", Change.WARNS),
        ("TU608", "1.12", Change.WARNS),
        ("TU609", "2.7", Change.RAISES),
        ("TU610", "1.0", Change.WARNS),
    ],
)
def test_release_and_change(code: str, since: str, change: Change) -> None:
    rule = rule_by_code(code)
    assert rule is not None and rule.since == since and rule.change is change


# -- TU605 set_default_tensor_type ----------------------------------------------------------------------


def test_tu605_alias_keyword_and_string() -> None:
    source = """
        import torch as th
        from torch import set_default_tensor_type as sdt
        sdt("torch.DoubleTensor")
        th.set_default_tensor_type(t=th.HalfTensor)
        """
    assert [a for _, a in found("TU605", source)] == [Applicability.SAFE, Applicability.SAFE]
    assert fixed("TU605", source) == textwrap.dedent("""
        import torch as th
        th.set_default_dtype(th.float64)
        th.set_default_dtype(th.float16)
        """)


def test_tu605_no_fix_where_unreadable_or_not_a_statement() -> None:
    source = """
        import functools
        import torch
        setter = functools.partial(torch.set_default_tensor_type, torch.DoubleTensor)
        torch.set_default_tensor_type(torch.BFloat16Tensor)
        if torch.cuda.is_available(): torch.set_default_tensor_type(torch.cuda.FloatTensor)
        """
    assert [a for _, a in found("TU605", source)] == [None, None, None]


def test_tu605_cpu_fix_is_unsafe_next_to_a_device() -> None:
    """set_default_tensor_type(torch.FloatTensor) also moved the default back to the CPU."""
    source = """
        import torch
        torch.set_default_device("cuda")
        torch.set_default_tensor_type(torch.FloatTensor)
        """
    assert [a for _, a in found("TU605", source)] == [Applicability.UNSAFE]
    assert fixed("TU605", source) == textwrap.dedent(source)


def test_tu605_cuda_type_in_a_function_and_a_string() -> None:
    source = """
        import torch

        def setup():
            torch.set_default_tensor_type('torch.cuda.DoubleTensor')
            return torch.zeros(1)
        """
    assert fixed("TU605", source, unsafe=True) == textwrap.dedent("""
        import torch

        def setup():
            torch.set_default_dtype(torch.float64)
            torch.set_default_device("cuda")
            return torch.zeros(1)
        """)


def test_tu605_mapping_against_both_releases() -> None:
    """The state after each fixed CPU call equals the state after the original, under 2.13 and 2.14."""
    program = textwrap.dedent("""
        import json, warnings
        import torch
        warnings.simplefilter("ignore")
        def state():
            return [str(torch.get_default_dtype()), str(torch.zeros(2).dtype), str(torch.tensor([1.0]).dtype),
                    str(torch.tensor([1j]).dtype), torch.Tensor(2).type(), str(torch.get_default_device())]
        out = {}
        for old, new in (("torch.DoubleTensor", torch.float64), ("torch.HalfTensor", torch.float16),
                         ("torch.FloatTensor", torch.float32)):
            torch.set_default_tensor_type(old)
            before = state()
            torch.set_default_tensor_type(torch.FloatTensor)
            torch.set_default_dtype(new)
            out[old] = [before, state()]
            torch.set_default_dtype(torch.float32)
        print(json.dumps(out))
        """)
    for version in ("2.13.0", "2.14.1"):
        completed = subprocess.run([str(ensure_env(version)), "-c", program], capture_output=True, text=True,
                                   check=True, timeout=300)
        for old, (before, after) in json.loads(completed.stdout).items():
            assert before == after, (version, old)


# -- TU607 weight_norm ---------------------------------------------------------------------------------


def test_tu607_module_path_and_keyword_name() -> None:
    source = """
        import torch
        from torch.nn.utils.weight_norm import weight_norm, remove_weight_norm
        m = weight_norm(torch.nn.Linear(2, 2), "weight", 0)
        remove_weight_norm(m, name="weight")
        """
    assert [a for _, a in found("TU607", source)] == [None, None, Applicability.UNSAFE, Applicability.UNSAFE]
    assert fixed("TU607", source) == textwrap.dedent(source)  # unsafe: not without the flag
    assert fixed("TU607", source, unsafe=True) == textwrap.dedent("""
        import torch
        m = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(2, 2), "weight", 0)
        torch.nn.utils.parametrize.remove_parametrizations(m, tensor_name="weight")
        """)


def test_tu607_references_and_look_alikes() -> None:
    source = """
        import functools
        import torch
        from torch.nn.utils import parametrizations

        def weight_norm(x):
            return x

        apply = functools.partial(torch.nn.utils.weight_norm, dim=None)
        a = weight_norm(1)
        b = parametrizations.weight_norm(torch.nn.Linear(2, 2))
        c = "torch.nn.utils.weight_norm(m)"
        d = torch.nn.utils.spectral_norm(torch.nn.Linear(2, 2))
        """
    assert found("TU607", source) == [(9, None)]


# -- TU608 assert_allclose -------------------------------------------------------------------------------


def test_tu608_positional_message_and_non_tensors() -> None:
    source = """
        import torch
        def check(actual, expected, why):
            torch.testing.assert_allclose(actual, expected, 1e-3, 1e-5, False, why)
        """
    assert [a for _, a in found("TU608", source)] == [Applicability.UNSAFE]  # inputs of unknown type
    assert fixed("TU608", source, unsafe=True) == textwrap.dedent("""
        import torch
        def check(actual, expected, why):
            torch.testing.assert_close(actual, expected, rtol=1e-3, atol=1e-5, equal_nan=False, msg=why or None, check_dtype=False)
        """)


def test_tu608_safe_only_with_a_number_and_tensors() -> None:
    source = """
        import torch
        x = torch.ones(3)
        tol = 1e-4
        torch.testing.assert_allclose(x, x, rtol=tol, atol=tol)
        torch.testing.assert_allclose(x, [1.0, 1.0, 1.0], rtol=1e-4, atol=1e-5)
        torch.testing.assert_allclose(x, x, rtol=None, atol=1e-5)
        torch.testing.assert_allclose(x, x, msg=f"x={x}", atol=0, rtol=0)
        torch.testing.assert_allclose(*[x, x])
        """
    assert [a for _, a in found("TU608", source)] == [
        Applicability.UNSAFE, Applicability.UNSAFE, Applicability.SAFE, Applicability.SAFE, None,
    ]
    assert 'msg=f"x={x}", atol=0, rtol=0, equal_nan=True, check_dtype=False)' in fixed("TU608", source)


def test_tu608_look_alikes() -> None:
    source = """
        import numpy as np
        from numpy.testing import assert_allclose
        import torch
        assert_allclose(np.ones(2), np.ones(2))
        np.testing.assert_allclose(np.ones(2), np.ones(2))
        torch.testing.assert_close(torch.ones(2), torch.ones(2))
        """
    assert found("TU608", source) == []


@pytest.mark.differential
def test_tu608_unsafe_fix_changes_the_verdict_on_complex_input() -> None:
    """Why the fix without tolerances is unsafe: assert_allclose's complex tolerance is 0, assert_close's is not."""
    original = "import torch\nM = torch.as_tensor(A)\ntorch.testing.assert_allclose(M, M + 1e-7)\n"
    rewritten = fixed("TU608", original, unsafe=True)
    assert "assert_close(M, M + 1e-7, equal_nan=True, check_dtype=False)" in rewritten

    def run(version: str, source: str) -> dict[str, str]:
        completed = subprocess.run([str(ensure_env(version)), str(PROBE)], input=json.dumps({"cases": {"c": source}}),
                                   capture_output=True, text=True, check=True, timeout=300)
        results = json.loads(completed.stdout)["results"]["c"]
        return {variant: "ok" if r["ok"] else r["error"] for variant, r in results.items()}

    before, after = run("2.13.0", original), run("2.14.1", rewritten)
    assert before["complex128"] == "AssertionError" and after["complex128"] == "ok"
    assert before["float64"] == after["float64"] == "ok"


def test_tu608_a_number_or_list_expected_becomes_a_tensor() -> None:
    """assert_allclose made a tensor of a non-tensor `expected`; assert_close raises TypeError on one."""
    source = """
        from torch.testing import assert_allclose
        assert_allclose(f(), -1)
        assert_allclose(g(), [1.0, 2.5], rtol=0, atol=0)
        assert_allclose(h(), expected)
        """
    assert fixed("TU608", source, unsafe=True) == textwrap.dedent("""
        import torch
        from torch.testing import assert_close
        assert_close(f(), torch.tensor(-1), equal_nan=True, check_dtype=False)
        assert_close(g(), torch.tensor([1.0, 2.5]), rtol=0, atol=0, equal_nan=True, check_dtype=False)
        assert_close(h(), expected, equal_nan=True, check_dtype=False)
        """)


@pytest.mark.differential
def test_tu608_fix_with_a_number_expected_gives_the_same_verdict() -> None:
    """Run: the original on 2.13.0, the fix on 2.14.1 with FutureWarning an error (none is left)."""
    cases = {
        "equal": "import torch\nfrom torch.testing import assert_allclose\nassert_allclose(torch.tensor(2.0), 2.0)\n",
        "list": "import torch\nx = torch.tensor([1.0, 2.0])\ntorch.testing.assert_allclose(x, [1.0, 2.0])\n",
        "differs": "import torch\nfrom torch.testing import assert_allclose\nassert_allclose(torch.tensor(2.0), 3)\n",
    }

    def verdict(version: str, source: str) -> str:
        completed = subprocess.run([str(ensure_env(version)), "-W", "error::FutureWarning", "-c", source],
                                   capture_output=True, text=True, check=False, timeout=300)
        raised = re.search(r"^(\w+(?:Error|Warning))\b", completed.stderr, re.MULTILINE)
        return "ok" if completed.returncode == 0 else raised.group(1) if raised else completed.stderr[-300:]

    for name, source in cases.items():
        rewritten = fixed("TU608", source, unsafe=True)
        assert "torch.tensor(" in rewritten, name
        original = verdict("2.13.0", source.replace("import torch\n", "import torch, warnings\n"
                                                    "warnings.simplefilter('ignore')\n", 1))
        assert original == verdict("2.14.1", rewritten) == ("AssertionError" if name == "differs" else "ok"), name


# -- TU609 LR schedulers' verbose ------------------------------------------------------------------------


def test_tu609_expression_spread_and_super_forms() -> None:
    source = """
        import torch
        from torch.optim import lr_scheduler as ls

        class Sched(ls.StepLR):
            def __init__(self, optimizer, quiet):
                super(Sched, self).__init__(optimizer, 10, verbose=not quiet)

        class Other:
            def __init__(self, verbose):
                super().__init__(verbose)

        def build(opt, args):
            a = ls.OneCycleLR(opt, max_lr=1.0, total_steps=10, verbose=args.verbose)
            b = ls.ExponentialLR(opt, 0.9, **{"verbose": False})
            c = ls.ChainedScheduler([a])
            return a, b, c
        """
    assert found("TU609", source) == [(7, Applicability.UNSAFE), (14, Applicability.UNSAFE), (15, None)]
    assert found("TU609", source, prefilter=False) == found("TU609", source)
    assert "super(Sched, self).__init__(optimizer, 10)" in fixed("TU609", source, unsafe=True)


def test_tu609_keyword_false_is_safe_and_multiline() -> None:
    """The argument goes; its comment stays (Edits.remove_argument keeps every comment)."""
    source = """
        import torch
        def build(opt):
            return torch.optim.lr_scheduler.ReduceLROnPlateau(
                opt,
                mode="max",
                verbose=False,  # quiet
            )
        """
    assert fixed("TU609", source) == textwrap.dedent("""
        import torch
        def build(opt):
            return torch.optim.lr_scheduler.ReduceLROnPlateau(
                opt,
                mode="max",
                # quiet
            )
        """)


# -- TU610 upsample --------------------------------------------------------------------------------------


def test_tu610_references_quantized_and_repeated_keyword() -> None:
    source = """
        import functools
        import torch.nn.functional as F
        from torch.ao.nn.quantized import functional as qF
        up = functools.partial(F.upsample, scale_factor=2)
        near = functools.partial(F.upsample_nearest, scale_factor=2)
        def go(q, x):
            a = qF.upsample_bilinear(q, scale_factor=2)
            b = F.upsample_nearest(x, 2, mode="nearest")
            return a, b
        """
    assert [a for _, a in found("TU610", source)] == [Applicability.SAFE, None, Applicability.SAFE, None]
    result = fixed("TU610", source)
    assert "functools.partial(F.interpolate, scale_factor=2)" in result
    assert 'qF.interpolate(q, scale_factor=2, mode="bilinear", align_corners=True)' in result


def test_tu610_mock_of_upsample_follows() -> None:
    source = """
        from unittest import mock
        import torch.nn.functional as F

        @mock.patch("torch.nn.functional.upsample")
        def test(patched):
            F.upsample(None, 2)
        """
    result = fixed("TU610", source)
    assert 'mock.patch("torch.nn.functional.interpolate")' in result and "F.interpolate(None, 2)" in result




# -- TU612 NCCL's default timeout ------------------------------------------------------------------------


def test_tu612_reports_a_written_nccl_backend_without_timeout() -> None:
    source = """
        import torch.distributed as dist
        from torch.distributed import init_process_group as init
        def setup(args, gpu):
            dist.init_process_group("nccl")
            init(backend="NCCL", rank=0, world_size=1)
            dist.init_process_group(backend="nccl" if gpu else "gloo")
            dist.init_process_group("nccl", None, None)
            dist.init_process_group("nccl", timeout=args.timeout)
            dist.init_process_group(args.backend)
            dist.init_process_group("cpu:gloo,cuda:nccl")
        """
    assert [line for line, _ in found("TU612", source)] == [5, 6, 7, 8]  # (the source starts with a blank line)
    assert "init(backend=\"NCCL\", rank=0, world_size=1, timeout=timedelta(minutes=30))" in fixed("TU612", source)
    assert fixed("TU612", source).count("from datetime import timedelta") == 1
    assert 'dist.init_process_group("nccl", None, timedelta(minutes=30))' in fixed("TU612", source)


@pytest.mark.differential
def test_tu612_the_target_gives_nccl_ten_minutes() -> None:
    """What the rule says of the target, run: torch 2.14.1 (a CUDA build, run on the CPU) resolves
    the default timeout per backend, 10 minutes for NCCL and 30 for gloo, from `timeout=None`."""
    probe = ("import inspect, torch.distributed.distributed_c10d as c\n"
             "print(c._get_default_timeout('nccl'), c._get_default_timeout('gloo'),"
             " inspect.signature(c.init_process_group).parameters['timeout'].default)\n")
    completed = subprocess.run([str(ensure_env("2.14.1")), "-c", probe], capture_output=True, text=True, check=True,
                               timeout=300)
    assert completed.stdout.split() == ["0:10:00", "0:30:00", "None"]


# -- TU613 DistributedDataParallel(broadcast_buffers=) ---------------------------------------------------


@pytest.mark.differential
def test_tu613_fix_syncs_the_same_without_the_warning() -> None:
    """Run in a one-process gloo group: `broadcast_buffers=True` warns on 2.13.0 and 2.14.1; the fix,
    `forward_sync_buffers=True`, sets the same syncs and does not."""
    body = (
        "import warnings, torch, torch.distributed as dist\n"
        "dist.init_process_group('gloo', store=dist.HashStore(), rank=0, world_size=1)\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    m = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2), broadcast_buffers=True)\n"
        "print(m.forward_sync_buffers, sum('buffers' in str(w.message) for w in caught))\n"
    )
    fixed_body = fix(body, select=["TU613"])
    assert "forward_sync_buffers=True)" in fixed_body
    for version in ("2.13.0", "2.14.1"):
        results = [subprocess.run([str(ensure_env(version)), "-c", text], capture_output=True, text=True,
                                  check=True, timeout=300).stdout.split() for text in (body, fixed_body)]
        assert results == [["True", "1"], ["True", "0"]], version


# -- TU616 torch.hub's trust_repo -----------------------------------------------------------------------


@pytest.mark.differential
def test_tu616_the_default_asks_on_stdin_and_the_fix_does_not(tmp_path: Path) -> None:
    """No network here: the trust check itself, which `torch.hub.load` runs before any download, on a
    machine whose hub cache is empty and whose job has no terminal (stdin /dev/null)."""
    fixed = fix('import torch\nm = torch.hub.load("ultralytics/yolov5", "yolov5s")\n', unsafe=True, select=["TU616"])
    assert "trust_repo=True)" in fixed
    probe = textwrap.dedent("""
        import inspect, sys, torch.hub as hub
        trust = {"check": "check", "True": True}[sys.argv[1]]
        print(inspect.signature(hub.load).parameters["trust_repo"].default)
        try:
            hub._check_repo_is_trusted("ultralytics", "yolov5", "ultralytics_yolov5_master", trust_repo=trust)
            print("ran")
        except EOFError:
            print("EOFError")
        """)
    for version in ("2.13.0", "2.14.1"):
        outcomes = []
        for trust in ("check", "True"):  # the default since 2.11, and the fix
            home = tmp_path / f"{version}-{trust}"
            (home / "hub").mkdir(parents=True)  # (as `torch.hub.load` makes it before the check)
            completed = subprocess.run([str(ensure_env(version)), "-c", probe, trust], capture_output=True, text=True,
                                       check=True, timeout=300, stdin=subprocess.DEVNULL,
                                       env={**os.environ, "TORCH_HOME": str(home)})
            lines = completed.stdout.splitlines()  # (the default; then the question input() asked, if any)
            outcomes.append((lines[0], "Do you trust this repository" in completed.stdout, lines[-1][-8:]))
        assert outcomes == [("check", True, "EOFError"), ("check", False, "ran")], version


# -- TU617 torchelastic's logs_specs --------------------------------------------------------------------


@pytest.mark.parametrize("call, found", [
    ("LocalElasticAgent(spec)", 1),  # logs_specs is required since 2.3
    ('LocalElasticAgent(spec, "spawn")', 1),  # 2.2's start method, second
    ("LocalElasticAgent(spec, logs)", 0),  # a LogsSpecs, for all the code shows
    ("LocalElasticAgent(spec, log_dir=d, logs_specs=s)", 1),
    ("start_processes('w', fn, {}, {}, '/tmp/logs')", 1),  # the fifth was log_dir
    ("start_processes('w', fn, {}, {}, attempt_log_dir)", 1),
    ("start_processes('w', fn, {}, {}, specs)", 0),  # (the new logs_specs, by position, for all the code shows)
    ("start_processes('w', fn, {}, {}, logs_specs=specs)", 0),
    ("LocalElasticAgent(*parts)", 0),
])
def test_tu617_agents_and_process_starters(call: str, found: int) -> None:
    source = (
        "from torch.distributed.elastic.agent.server.local_elastic_agent import LocalElasticAgent\n"
        "from torch.distributed.elastic.multiprocessing import start_processes\n"
        f"x = {call}\n"
    )
    assert len(check(source, ["TU617"])) == found
