"""TU602 (torch.cuda.amp / torch.cpu.amp), TU603 (sdp_kernel) and TU611 (per-device autocast getters):
the forms the examples leave out, and, under torch 2.14.1, that each fixed example stops warning and
that TU611's table spells torch's own warnings. The names and bodies the fixes rely on are checked in
the torch 2.15.0 sources (parsed, never imported)."""

from __future__ import annotations

import json
import re
import subprocess
import textwrap

import pytest

from differential.envs import ensure_env, ensure_sources
from helpers import check, fix
from torchup.rules import rule_by_code
from torchup.rules.tu602_device_specific_amp import WARNINGS
from torchup.rules.tu611_autocast_dtype_getters import ENTRIES, TABLE


def fixed(code: str, source: str) -> str:
    return fix(textwrap.dedent(source), select=[code])


def findings(code: str, source: str) -> list[str]:
    return [d.message for d in check(textwrap.dedent(source), select=[code]) if d.code == code]


FIXES = [
    pytest.param(
        "TU602",
        """
        import torch as th
        with th.cuda.amp.autocast():
            s = th.cuda.amp.GradScaler()
        """,
        """
        import torch as th
        with th.amp.autocast("cuda", dtype=th.float16):
            s = th.amp.GradScaler("cuda")
        """,
        id="TU602-torch-alias",
    ),
    pytest.param(
        "TU602",
        """
        from torch.cuda.amp import autocast as ac, GradScaler
        with ac(dtype=None):
            s = GradScaler(init_scale=1024)
        """,
        """
        import torch
        with torch.amp.autocast("cuda", dtype=None):
            s = torch.amp.GradScaler("cuda", init_scale=1024)
        """,
        id="TU602-from-import-as-explicit-dtype-kept",
    ),
    pytest.param(
        "TU602",
        """
        import torch
        with torch.cuda.amp.autocast(
            enabled=use_amp,  # a comment
        ):
            pass
        """,
        """
        import torch
        with torch.amp.autocast(
            "cuda",
            enabled=use_amp, dtype=torch.float16,  # a comment
        ):
            pass
        """,
        id="TU602-multi-line-call-keeps-its-comment",
    ),
    pytest.param(
        "TU602",
        """
        import torch

        @torch.cuda.amp.autocast()
        def f(x):
            return x

        @torch.cuda.amp.custom_fwd()
        def g(ctx, x):
            return x

        h = torch.cuda.amp.custom_fwd(g)
        k = torch.cuda.amp.custom_bwd(bwd=g)
        """,
        """
        import torch

        @torch.amp.autocast("cuda", dtype=torch.float16)
        def f(x):
            return x

        @torch.amp.custom_fwd(device_type="cuda")
        def g(ctx, x):
            return x

        h = torch.amp.custom_fwd(g, device_type="cuda")
        k = torch.amp.custom_bwd(bwd=g, device_type="cuda")
        """,
        id="TU602-decorator-calls-and-plain-calls",
    ),
    pytest.param(
        "TU602",
        """
        import torch
        with torch.cuda.amp.autocast(**opts):
            pass
        with torch.cuda.amp.autocast(dtype=torch.float16, **opts):
            pass
        with torch.cuda.amp.autocast(*args):
            pass
        s = torch.cuda.amp.GradScaler(*args, **kwargs)
        """,
        """
        import torch
        with torch.cuda.amp.autocast(**opts):
            pass
        with torch.amp.autocast("cuda", dtype=torch.float16, **opts):
            pass
        with torch.cuda.amp.autocast(*args):
            pass
        s = torch.amp.GradScaler("cuda", *args, **kwargs)
        """,
        id="TU602-star-arguments",
    ),
    pytest.param(
        "TU602",
        """
        from torch.cuda.amp import autocast
        saved = autocast
        with autocast():
            pass
        """,
        """
        from torch.cuda.amp import autocast
        import torch
        saved = autocast
        with torch.amp.autocast("cuda", dtype=torch.float16):
            pass
        """,
        id="TU602-import-kept-while-a-use-is-left",
    ),
    pytest.param(
        "TU602",
        """
        from torch.cuda.amp import autocast

        def f(torch):
            with autocast():
                pass
        """,
        None,
        id="TU602-torch-shadowed-no-fix",
    ),
    pytest.param(
        "TU602",
        """
        import torch.cuda.amp.autocast_mode
        from torch.cuda.amp.grad_scaler import GradScaler
        with torch.cuda.amp.autocast_mode.autocast(False):
            s = GradScaler()
        """,
        """
        import torch.cuda.amp.autocast_mode
        with torch.amp.autocast("cuda", enabled=False, dtype=torch.float16):
            s = torch.amp.GradScaler("cuda")
        """,
        id="TU602-defining-modules",
    ),
    pytest.param(
        "TU602",
        """
        import torch
        print(f"{torch.cuda.amp.GradScaler(enabled=False)}")
        """,
        """
        import torch
        print(f"{torch.amp.GradScaler('cuda', enabled=False)}")
        """,
        id="TU602-inside-an-f-string",
    ),
    pytest.param(
        "TU603",
        """
        from torch.backends import cuda
        with cuda.sdp_kernel(enable_cudnn=False):
            pass
        """,
        """
        from torch.nn.attention import SDPBackend, sdpa_kernel
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
            pass
        """,
        id="TU603-module-from-import",
    ),
    pytest.param(
        "TU603",
        """
        import torch

        @torch.backends.cuda.sdp_kernel()
        def f():
            pass
        """,
        """
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel

        @sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH, SDPBackend.CUDNN_ATTENTION])
        def f():
            pass
        """,
        id="TU603-decorator-all-defaults",
    ),
    pytest.param(
        "TU603",
        """
        import torch
        with torch.backends.cuda.sdp_kernel(False, False, False, False):
            pass
        """,
        """
        import torch
        from torch.nn.attention import sdpa_kernel
        with sdpa_kernel([]):
            pass
        """,
        id="TU603-all-disabled",
    ),
    pytest.param(
        "TU603",
        """
        import torch

        def f(sdpa_kernel):
            with torch.backends.cuda.sdp_kernel(enable_math=0):
                pass
        """,
        """
        import torch
        from torch.nn.attention import SDPBackend

        def f(sdpa_kernel):
            with torch.nn.attention.sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION]):
                pass
        """,
        id="TU603-new-name-shadowed-falsy-number",
    ),
    pytest.param(
        "TU603",
        """
        import torch
        with torch.backends.cuda.sdp_kernel(
            enable_flash=False,  # slow
        ):
            pass
        with torch.backends.cuda.sdp_kernel(**flags):
            pass
        """,
        None,
        id="TU603-comment-and-kwargs-no-fix",
    ),
    pytest.param(
        "TU611",
        """
        import torch
        d = torch._C.get_autocast_gpu_dtype()
        print(f"{torch.get_autocast_cpu_dtype()}")
        """,
        """
        import torch
        d = torch.get_autocast_dtype("cuda")
        print(f"{torch.get_autocast_dtype('cpu')}")
        """,
        id="TU611-torch-C-and-f-string",
    ),
    pytest.param(
        "TU611",
        """
        from torch import is_autocast_xla_enabled as xla_on
        import torch as th
        if xla_on():
            th.set_autocast_xla_enabled(False)
        """,
        """
        import torch as th
        if th.is_autocast_enabled("xla"):
            th.set_autocast_enabled("xla", False)
        """,
        id="TU611-import-as-and-module-alias",
    ),
    pytest.param(
        "TU611",
        """
        import torch
        torch.set_autocast_cpu_dtype(dtype=torch.float16)
        torch.set_autocast_cpu_dtype()
        torch.set_autocast_ipu_dtype(*a)
        """,
        None,
        id="TU611-arguments-the-old-function-rejects-no-fix",
    ),
]


@pytest.mark.parametrize(("code", "source", "expected"), FIXES)
def test_fix(code: str, source: str, expected: str | None) -> None:
    assert findings(code, source)
    assert fixed(code, source) == textwrap.dedent(expected if expected is not None else source)


NOT_REPORTED = [
    pytest.param(
        "TU602",
        """
        import torch
        from torch import autocast
        from torch.amp import custom_fwd

        class Scaler(torch.amp.GradScaler):
            pass

        @custom_fwd(device_type="cpu")
        def f(ctx, x):
            return x

        with autocast("cpu"), torch.amp.autocast("cpu"):
            pass
        ok = torch.cuda.amp.common.amp_definitely_not_available()
        """,
        id="TU602-new-api",
    ),
    pytest.param(
        "TU602",
        """
        from apex import amp
        from mylib.amp import autocast, GradScaler

        with autocast():
            scaler = GradScaler()
        model = amp.initialize(None)
        """,
        id="TU602-other-libraries",
    ),
    pytest.param(
        "TU603",
        """
        import torch
        from mylib import sdp_kernel

        with sdp_kernel(enable_flash=False):
            pass
        torch.backends.cuda.enable_mem_efficient_sdp(False)
        ok = torch.backends.cuda.flash_sdp_enabled()
        """,
        id="TU603-look-alikes",
    ),
    pytest.param(
        "TU611",
        """
        import torch

        class M:
            def get_autocast_gpu_dtype(self):
                return 1

        a = M().get_autocast_gpu_dtype()
        b = torch.is_autocast_enabled()
        torch.set_autocast_enabled(True)
        c = torch.is_autocast_cache_enabled()
        """,
        id="TU611-look-alikes-and-no-device-overloads",
    ),
]


@pytest.mark.parametrize(("code", "source"), NOT_REPORTED)
def test_not_reported(code: str, source: str) -> None:
    assert findings(code, source) == []


def test_every_reference_is_reported() -> None:
    source = """
    import torch
    from torch.cuda import amp

    class Scaler(amp.GradScaler):
        pass

    def f(scaler: torch.cuda.amp.GradScaler) -> bool:
        return isinstance(scaler, torch.cpu.amp.GradScaler)

    make = torch.cuda.amp.autocast
    """
    assert len(findings("TU602", source)) == 5  # with the module import line
    # The class checks move to the new class, of which the old ones are subclasses (any object passes
    # that passed before); the subclass and the saved name stay.
    expected = source.replace("scaler: torch.cuda.amp.GradScaler", "scaler: torch.amp.GradScaler").replace(
        "isinstance(scaler, torch.cpu.amp.GradScaler)", "isinstance(scaler, torch.amp.GradScaler)")
    assert fixed("TU602", source) == textwrap.dedent(expected)


def test_the_dtype_the_fix_adds_is_the_old_default() -> None:
    """The fix names the dtype the old __init__ defaulted to (cuda float16, cpu bfloat16)."""
    source = ensure_sources("2.15.0")
    for device, dtype in (("cuda", "float16"), ("cpu", "bfloat16")):
        text = (source / device / "amp" / "autocast_mode.py").read_text()
        assert f"dtype: torch.dtype = torch.{dtype}," in text
        assert f'"{device}", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled' in text


def test_the_new_functions_take_what_the_fixes_pass() -> None:
    source = ensure_sources("2.15.0")
    amp = (source / "amp" / "autocast_mode.py").read_text()
    assert re.search(r"def custom_fwd\(\s*fwd=None,\s*\*,\s*device_type: str,", amp)
    assert re.search(r"def custom_bwd\(bwd=None, \*, device_type: str\)", amp)
    scaler = (source / "amp" / "grad_scaler.py").read_text()
    assert re.search(r"def __init__\(\s*self,\s*device: str = \"cuda\",\s*init_scale", scaler)
    backends = (source / "backends" / "cuda" / "__init__.py").read_text()
    body = backends[backends.index("def sdp_kernel("):]
    order = [body.index(f"SDPBackend.{m}") for m in ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH", "CUDNN_ATTENTION")]
    assert order == sorted(order) and "with sdpa_kernel(backend_list) as context:" in body
    stubs = (source / "_C" / "__init__.pyi").read_text()
    for entry in {e.new for e in TABLE.values()}:
        assert f"def {entry}(device_type: str" in stubs


# -- under torch 2.14.1 ----------------------------------------------------------------------------

RECORD = """
import json, sys, warnings
source = sys.stdin.read()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    exec(compile(source, "<program>", "exec"), {"__name__": "__program__"})
print(json.dumps(sorted({f"{w.category.__name__}: {w.message}" for w in caught
                         if issubclass(w.category, (DeprecationWarning, FutureWarning))})))
"""


def deprecations(program: str) -> list[str]:
    completed = subprocess.run(
        [str(ensure_env("2.14.1")), "-c", RECORD], input=program, capture_output=True, text=True, timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    return json.loads(completed.stdout)


EXECUTABLE = [
    pytest.param(code, example, id=f"{code}-{example.title}")
    for code in ("TU602", "TU603", "TU611")
    for example in rule_by_code(code).examples  # type: ignore[union-attr]
    if example.fixed is not None and example.executable
]
MARKERS = {
    "TU602": [text.split("(")[0].format(device=device) for text in WARNINGS.values() for device in ("cuda", "cpu")],
    "TU603": ["`torch.backends.cuda.sdp_kernel()` is deprecated"],
    "TU611": [entry.warning.split("(")[0] for entry in TABLE.values()],
}


@pytest.mark.differential
@pytest.mark.parametrize(("code", "example"), EXECUTABLE)
def test_the_original_warns_and_the_fix_does_not(code: str, example: object) -> None:
    before = deprecations(example.source)  # type: ignore[attr-defined]
    after = deprecations(example.fixed)  # type: ignore[attr-defined]
    assert any(marker in message for message in before for marker in MARKERS[code]), before
    assert not any(marker in message for message in after for marker in MARKERS[code]), after


@pytest.mark.differential
def test_the_table_spells_torchs_warnings() -> None:
    """Each old function, called as the fix expects it, gives the warning TABLE states."""
    program = "\n".join(
        f"torch.{entry.old}(" + {"dtype": f"torch.get_autocast_dtype('{entry.device}')",
                                 "enabled": f"torch.is_autocast_enabled('{entry.device}')",
                                 None: ""}[entry.parameter] + ")"
        for entry in ENTRIES
    )
    got = deprecations("import torch\n" + program)
    messages = {message.split(" (Triggered internally")[0] for message in got}
    assert messages == {f"DeprecationWarning: {entry.warning}" for entry in TABLE.values()}


def test_tu602_the_deprecated_modules_as_values() -> None:
    """yolov5's `from torch.cuda import amp`, DeepSpeed's `return torch.cuda.amp`, timm's
    `getattr(torch.cuda.amp, 'autocast')`: reported, without a fix; `amp.X` is reported as X."""
    from helpers import check

    source = (
        "import torch\n"
        "from torch.cuda import amp\n"
        "import torch.cuda.amp as amp2\n"
        "ok = getattr(torch.cuda.amp, 'autocast') is not None\n"
        "def accelerator_amp():\n"
        "    return torch.cuda.amp\n"
        "scaler = amp.GradScaler()\n"
        "with torch.amp.autocast('cuda'):\n"
        "    pass\n"
    )
    found = check(source, select=["TU602"])
    assert [(d.line, d.fix is None) for d in found] == [(2, True), (3, True), (4, True), (6, True), (7, False)]
