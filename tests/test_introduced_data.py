"""torchup/data/introduced.json (made by tools/api_introduced.py): its shape, facts it must hold, the tool's
small parts, and, where the wheels are cached, that the tool gives the same answers again."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from helpers import load_tool

ROOT = Path(__file__).resolve().parent.parent
DATA = json.loads((ROOT / "torchup" / "data" / "introduced.json").read_text())
TOOL = load_tool("api_introduced")
MINORS = [f"1.{n}" for n in range(14)] + [f"2.{n}" for n in range(16)]
HOWS = {
    "definition", "assignment", "import", "module", "add_docstr", "used by torch's own code", "signature",
    "kwargs read", "ATen signature", "docstring signature",
}  # fmt: skip
# Checked by hand against the wheels (and the release notes where they agree).
FACTS = {
    "torch.linalg.cholesky": "1.8",
    "torch.linalg.qr": "1.8",
    "torch.linalg.cholesky(upper=)": "1.10",
    "torch.linalg.qr(A=)": "1.12",  # the docstring says `A` from 1.9; the schema (so Python) from 1.12
    "torch.autocast": "1.10",
    "torch.amp.GradScaler": "2.3",
    "torch.amp.GradScaler(device=)": "2.3",
    "torch.load(weights_only=)": "1.13",
    "torch.func.vmap": "2.0",
    "torch.nn.attention.sdpa_kernel": "2.3",
    "torch.nn.attention.SDPBackend.MATH": "2.3",
    "torch.testing.assert_close": "1.9",
    "torch.outer": "1.7",  # stub, docstring and C++ header of 1.7.1 all have it
    "torch.where": "1.0",
    "torch.compile": "2.0",
    "torch.compile(dynamic_shapes=)": "2.14",
    "torch.cuda.amp.GradScaler": "1.5",
    "torch.utils.checkpoint.checkpoint(use_reentrant=)": "1.11",
    "torch.onnx.export(dynamo=)": "2.4",
    "torch.distributed.set_timeout": "2.14",
}


def test_releases_are_the_newest_patch_of_each_minor() -> None:
    assert list(DATA["releases"]) == MINORS
    for minor, version in DATA["releases"].items():
        assert version.startswith(minor + "."), (minor, version)
    assert DATA["releases"] == {m: TOOL.RELEASES[m][0] for m in MINORS}


def test_every_entry_is_well_formed() -> None:
    names = DATA["names"]
    assert list(names) == sorted(names)
    assert "tools/api_introduced.py" in DATA["_about"]
    for key, entry in names.items():
        assert TOOL.KEY.match(key), key
        assert entry["since"] is None or entry["since"] in MINORS, key
        if entry["since"] is None:
            assert entry.get("note") and "evidence" not in entry, key
            continue
        evidence = entry["evidence"]
        assert evidence["wheel"].startswith(f"torch-{DATA['releases'][entry['since']]}-"), key
        assert evidence["file"].startswith("torch/") and isinstance(evidence["line"], int), key
        assert evidence["how"] in HOWS, key
        if "until" in entry:
            assert MINORS.index(entry["until"]) >= MINORS.index(entry["since"]), key


def test_covers_what_the_fixes_write() -> None:
    assert set(TOOL.KEYS) <= set(DATA["names"])


@pytest.mark.parametrize(("key", "since"), sorted(FACTS.items()))
def test_known_facts(key: str, since: str) -> None:
    assert DATA["names"][key]["since"] == since


def test_a_parameter_no_release_has_is_null() -> None:
    entry = DATA["names"]["torch.profiler.profile(use_device=)"]
    assert entry["since"] is None and "not a parameter" in entry["note"]


def test_a_parameter_is_never_older_than_its_callable() -> None:
    for key, entry in DATA["names"].items():
        name, _, param = key.partition("(")
        owner = DATA["names"].get(name)
        if param and owner and owner["since"] and entry["since"]:
            assert MINORS.index(entry["since"]) >= MINORS.index(owner["since"]), key


# --- The tool's parts, on text ---------------------------------------------------------------------


def test_docstring_signature_lines() -> None:
    doc = "\nlinalg.qr(A, mode='reduced', *, out=None) -> (Tensor, Tensor)\n\nComputes..."
    assert TOOL.docstring_params(doc, "torch.linalg.qr") == ["A", "mode", "out"]
    assert TOOL.docstring_params("Computes the QR decomposition.", "torch.linalg.qr") is None


def test_aten_declarations_read_names_and_out_variants() -> None:
    header = (
        "TORCH_API inline ::std::tuple<at::Tensor,at::Tensor> linalg_qr(const at::Tensor & A,"
        ' c10::string_view mode="reduced") {\n'
        "TORCH_API inline ::std::tuple<at::Tensor &,at::Tensor &> linalg_qr_out(at::Tensor & Q, at::Tensor & R,"
        ' const at::Tensor & A, c10::string_view mode="reduced") {\n'
        "TORCH_API inline at::Tensor linalg_qr_ex(const at::Tensor & self) {\n"
    )
    found = list(TOOL.aten_declarations(header, "linalg_qr"))
    assert found == [(1, False, ["A", "mode"]), (2, True, ["Q", "R", "A", "mode"])]


def test_kwargs_read_is_a_read_not_a_forward() -> None:
    tree = ast.parse(
        "def checkpoint(function, *args, **kwargs):\n"
        "    preserve = kwargs.pop('preserve_rng_state', True)\n"
        "    return function(*args, **kwargs)\n"
    )
    func = tree.body[0]
    assert TOOL.kwargs_read(func, "preserve_rng_state") == 2
    assert TOOL.kwargs_read(func, "use_reentrant") is None


def test_since_is_the_start_of_the_last_unbroken_run() -> None:
    found = TOOL.Found("torch/x.py", 3, "definition")
    wheels = {m: f"torch-{m}.0-x.whl" for m in ("1.0", "1.1", "1.2", "1.3")}
    answers = {"1.0": (found, None), "1.1": (None, "no such name"), "1.2": (found, None), "1.3": (found, None)}
    entry = TOOL.entry("torch.x", answers, wheels)
    assert entry["since"] == "1.2" and entry["also_in"] == ["1.0"] and "until" not in entry
    answers["1.3"] = (None, "defined, but every call raises")
    entry = TOOL.entry("torch.x", answers, wheels)
    assert entry["until"] == "1.2" and "every call raises" in entry["note"]


# --- The wheels, when cached -----------------------------------------------------------------------


def cached_wheel(minor: str) -> Path | None:
    version = TOOL.RELEASES[minor][0]
    found = sorted(TOOL.ah.WHEELS.glob(f"torch-{version}-*.whl"))
    return found[0] if found else None


# (key, the release before its `since`): the tool must find it in `since`, with the same evidence, and
# not in the release before.
REPRODUCED = [
    ("torch.amp.GradScaler(device=)", "2.2"),  # a class's __init__ parameter
    ("torch.linalg.qr(A=)", "1.11"),  # a C operator's C++ declaration
    ("torch.nn.attention.SDPBackend.MATH", "2.2"),  # an enum member of a stub, reached through `X = X`
]


@pytest.mark.parametrize(("key", "before"), REPRODUCED)
def test_the_tool_reproduces_entries_from_cached_wheels(key: str, before: str | None) -> None:
    entry = DATA["names"][key]
    minors = [entry["since"], *([before] if before else [])]
    wheels = {m: cached_wheel(m) for m in minors}
    if not all(wheels.values()):
        pytest.skip("the torch wheels are not cached (python3 tools/api_introduced.py downloads them)")
    release = TOOL.Release(entry["since"], wheels[entry["since"]])
    found, _ = release.find(key)
    release.close()
    assert found is not None and found.record(wheels[entry["since"]].name) == entry["evidence"]
    if before:
        release = TOOL.Release(before, wheels[before])
        assert release.find(key)[0] is None
        release.close()


def test_keys_in_the_file_are_kept(tmp_path: Path) -> None:
    output = tmp_path / "introduced.json"
    output.write_text(json.dumps({"names": {"torch.added_by_hand": {}}}))
    keys = TOOL.keys_of(output)
    assert "torch.added_by_hand" in keys and set(TOOL.KEYS) <= set(keys)
    assert all(re.fullmatch(r"[\w.]+(\(\w+=\))?", k) for k in keys)
