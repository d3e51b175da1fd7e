"""Proof by execution for the fixes of 2.14's FutureWarnings (TU170, TU171, TU172, TU633).

Each program is fixed by torchup, then the original and the fixed program both run under torch
2.14.1 (the release that warns): the original must emit the FutureWarning the rule is about, the
fixed one must not, and both must compute the same thing. Distributed calls run in a one-process
gloo group on the CPU.
"""

from __future__ import annotations

import json
import subprocess
import textwrap

import pytest

from differential.envs import ensure_env
from helpers import fix

pytestmark = pytest.mark.differential

# Runs the program with FutureWarnings recorded; prints what it computed and which warned.
HARNESS = """
import json, os, socket, sys, warnings
import torch
import torch.distributed as dist

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
dist.init_process_group("gloo", rank=0, world_size=1)
job = json.loads(sys.stdin.read())
namespace = {}
exec(job["prelude"], namespace)  # not the program: what it needs that a CPU-only machine lacks
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    exec(compile(job["program"], "<program>", "exec"), namespace)
dist.destroy_process_group()
future = sorted({str(w.message) for w in caught if issubclass(w.category, FutureWarning)})
print(json.dumps({"result": namespace["RESULT"], "future_warnings": future}))
"""

# gloo has no gather_single (the collective both spellings end in), and no GPU is lent: record
# the calls that reach it instead, arguments included, and compare those.
RECORD_GATHER_SINGLE = """
import inspect
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d
CALLS = []
SIGNATURE = inspect.signature(c10d.gather_single)
def gather_single(*args, **kwargs):
    bound = SIGNATURE.bind(*args, **kwargs)
    bound.apply_defaults()
    CALLS.append({k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in bound.arguments.items() if k != "group"})
c10d.gather_single = dist.gather_single = gather_single
"""

PROGRAMS = {
    "TU170": (
        """
        import torch
        import torch.distributed as dist
        from torch.distributed import gather_into_tensor

        t = torch.arange(6.0).reshape(2, 3)
        out = torch.zeros(2, 3)
        dist.gather_into_tensor(out, t, dst=0)
        out2 = torch.zeros(2, 3)
        gather_into_tensor(out2, t * 2, 0)
        RESULT = CALLS
        """,
        "gather_into_tensor",
        RECORD_GATHER_SINGLE,
    ),
    "TU171": (
        """
        from datetime import timedelta

        import torch.distributed as dist
        import torch.distributed.distributed_c10d as c10d
        from torch.distributed.distributed_c10d import _set_pg_timeout

        c10d._set_pg_timeout(timedelta(minutes=30), dist.group.WORLD)
        _set_pg_timeout(timeout=timedelta(minutes=31))
        RESULT = "ok"
        """,
        "_set_pg_timeout",
        "",
    ),
    "TU633": (
        """
        import torch
        import torch.distributed as dist
        from torch.distributed import all_gather_into_tensor

        shard = torch.arange(4.0)
        out = torch.zeros(4)
        all_gather_into_tensor(out, shard)
        grad_shard = torch.zeros(4)
        dist.reduce_scatter_tensor(grad_shard, shard * 3)
        RESULT = [out.tolist(), grad_shard.tolist()]
        """,
        "_tensor` is deprecated",
        "",
    ),
    "TU172": (
        """
        import torch
        from torch.profiler import profile

        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
        x = torch.ones(2, 4)
        with profile(record_shapes=True, with_modules=True) as prof:
            y = model(x)
        with torch.autograd.profiler.profile(with_modules=True) as prof2:
            z = model(x)
        RESULT = [y.tolist(), z.tolist(), sorted({e.key for e in prof.key_averages()}),
                  sorted({e.key for e in prof2.key_averages()})]
        """,
        "with_modules",
        "",
    ),
}


def run_214(program: str, prelude: str) -> dict[str, object]:
    completed = subprocess.run(
        [str(ensure_env("2.14.1")), "-c", HARNESS],
        input=json.dumps({"program": program, "prelude": prelude}),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("code", sorted(PROGRAMS))
def test_fix_silences_the_warning_and_keeps_the_result(code: str) -> None:
    source, topic, prelude = PROGRAMS[code]
    original = textwrap.dedent(source)
    fixed = fix(original, unsafe=True, select=[code])
    assert fixed != original
    before, after = run_214(original, prelude), run_214(fixed, prelude)
    assert any(topic in w for w in before["future_warnings"]), before  # the control: 2.14 warns
    assert not any(topic in w for w in after["future_warnings"]), after
    assert after["result"] == before["result"] and before["result"]
