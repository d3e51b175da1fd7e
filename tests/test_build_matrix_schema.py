"""``torchup/data/build_matrix.json``: valid against its schema, faithful to RELEASE_FACTS.md, and honest about
what was verified. The validator is stdlib-only (``torchup.doctor.matrix.validate``); the mutation tests prove
that it rejects what it should.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from torchup.doctor.matrix import iter_facts, load, validate

DATA = Path(__file__).resolve().parent.parent / "torchup" / "data" / "build_matrix.json"
RAW = json.loads(DATA.read_text(encoding="utf-8"))
INDEX = "https://download.pytorch.org/whl/"

# Every fact the data may call verified (checked against a real wheel, the 2.15.0 sources or the PyPI listing).
# A fact that turns verified without being added here fails the test: verification is a claim to be reviewed.
VERIFIED = {
    "releases.2.14.latest",
    "releases.2.14.requires_python",
    "releases.2.14.python.pypi[0]",
    "releases.2.14.torch_compile.python_below",
    "releases.2.14.torch_compile.free_threaded_min",
    "releases.2.14.pypi_default.linux-x86_64",
    "releases.2.14.variants.cu130.available",
    "releases.2.14.variants.cu130.platforms.linux-x86_64",
    "releases.2.14.triton",
    "releases.2.14.cpp_extension_archs",
    "releases.2.15.latest",
    "releases.2.15.requires_python",
    "releases.2.15.python.pypi[0]",
    "releases.2.15.torch_compile.python_below",
    "releases.2.15.pypi_default.linux-x86_64",
    "releases.2.15.variants.cu132.available",
    "releases.2.15.variants.cu132.platforms.linux-x86_64",
    "cuda.runs_kernels_of[0]",
    "cuda.runs_kernels_of[1]",
    "cuda.rubin_inductor",
}


def test_the_packaged_file_is_valid():
    assert validate(RAW) == []
    matrix = load()  # through importlib.resources, as installed
    assert matrix.releases == ["2.14", "2.15"]
    assert matrix.newest == "2.15"


def test_exactly_the_reviewed_facts_are_verified():
    facts = iter_facts(RAW)
    assert len(facts) > 40
    assert {f.path for f in facts if f.verified} == VERIFIED


def test_every_fact_has_a_known_source_and_one_of_the_allowed_dates():
    for fact in iter_facts(RAW):
        assert fact.sources and all(s in RAW["sources"] for s in fact.sources), fact.path
        assert fact.date in {"2026-11-29", "2026-09-02", "2026-10"}, fact.path


# Faithful to RELEASE_FACTS.md ("Python versions and wheels", "Build matrix") ----------------------------------


def _python(release: str, where: str) -> dict[str, bool]:
    """Python tag -> verified, for one release and one index."""
    return {tag: entry["verified"] for entry in RAW["releases"][release]["python"][where] for tag in entry["value"]}


def test_python_versions_and_where_their_wheels_live():
    assert _python("2.14", "pypi") == dict.fromkeys(["3.10", "3.11", "3.12", "3.13", "3.14"], True)
    assert {"3.15", "3.15t"} <= set(_python("2.14", "pytorch_index"))  # only on the PyTorch index
    assert _python("2.15", "pypi")["3.15"] is True and _python("2.15", "pypi")["3.15t"] is True
    assert "3.10" not in _python("2.15", "pypi") and "3.10" not in _python("2.15", "pytorch_index")
    assert not any(_python("2.15", "pypi")[t] for t in ("3.11", "3.12", "3.13", "3.14"))  # the matrix says 3.11+
    assert RAW["releases"]["2.15"]["requires_python"]["value"] == "3.11"
    assert RAW["releases"]["2.14"]["torch_compile"]["python_below"]["value"] == "3.15"
    assert RAW["releases"]["2.15"]["torch_compile"]["python_below"]["value"] == "3.16"
    assert RAW["releases"]["2.14"]["torch_compile"]["free_threaded_min"]["value"] == "3.13.3"


def test_variants_their_index_urls_and_defaults():
    v14, v15 = RAW["releases"]["2.14"]["variants"], RAW["releases"]["2.15"]["variants"]
    assert set(v14) == {"cpu", "mps", "cu126", "cu130", "cu132", "rocm7.14", "xpu"}
    for variants in (v14, v15):
        for name, variant in variants.items():
            assert variant["index_url"] == INDEX + ("cpu" if name == "mps" else name)
    assert RAW["releases"]["2.14"]["pypi_default"]["linux-x86_64"]["value"] == "cu130"
    assert RAW["releases"]["2.15"]["pypi_default"]["linux-x86_64"]["value"] == "cu132"
    assert v15["cu126"]["available"]["value"] is False  # RFC #190385
    assert v15["cu130"]["available"]["value"] is None  # being removed from CI: not known
    assert v15["rocm7.14"]["available"]["value"] is None  # ROCm for 2.15: unverified
    for name, variant in v15.items():
        assert variant["available"]["verified"] is (name == "cu132"), name


def test_cuda_architectures_per_variant_and_platform():
    v14 = RAW["releases"]["2.14"]["variants"]
    pre_turing = {"5.0", "6.0", "7.0"}
    for platform in ("linux-x86_64", "windows-x86_64"):
        assert pre_turing <= set(v14["cu126"]["platforms"][platform]["cuda_archs"])
        for name in ("cu130", "cu132"):
            assert v14[name]["platforms"][platform]["cuda_archs"] == ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0"]
    assert v14["cu126"]["platforms"]["linux-aarch64"]["cuda_archs"] == ["8.0", "9.0"]
    assert v14["cu130"]["platforms"]["linux-aarch64"]["cuda_archs"] == ["8.0", "9.0", "10.0", "11.0", "12.0"]
    assert v14["cu130"]["platforms"]["linux-aarch64"]["ptx"] == "12.0"
    assert v14["cu130"]["platforms"]["windows-x86_64"]["ptx"] is None  # +PTX on Linux only
    assert RAW["cuda"]["runs_kernels_of"][0] == {**RAW["cuda"]["runs_kernels_of"][0], "arch": "10.7", "runs": "10.0"}


def test_companions():
    vision = {(e["torch"], e["torchvision"]): e for e in RAW["companions"]["torchvision"]}
    assert ("2.14", "0.29") in vision and not vision[("2.14", "0.29")].get("abi_compatible")
    assert vision[("2.15", "0.29")]["abi_compatible"] and vision[("2.16", "0.29")]["abi_compatible"]
    assert not vision[("2.15", "0.29")]["verified"]
    audio = RAW["companions"]["torchaudio"]
    assert audio["discontinued"] and audio["last_release"] == "2.11.0" and audio["last_torch"] == "2.11"


# The validator rejects broken data ------------------------------------------------------------------------------


def _mutated(change: Callable[[dict], object]) -> list[str]:
    data = copy.deepcopy(RAW)
    change(data)
    return validate(data)


def _cu130(data: dict) -> dict:
    return data["releases"]["2.14"]["variants"]["cu130"]


MUTATIONS = [
    ("missing source", lambda d: _cu130(d)["available"].pop("source"), '"source" must name'),
    ("unknown source", lambda d: _cu130(d)["available"].update(source="hearsay"), "unknown source 'hearsay'"),
    ("bad date", lambda d: _cu130(d)["available"].update(date="29/11/2026"), '"date" must be'),
    ("verified as text", lambda d: _cu130(d)["available"].update(verified="yes"), '"verified" must be'),
    ("unknown verified", lambda d: d["releases"]["2.15"]["variants"]["cu130"]["available"].update(verified=True),
     "cannot be verified"),
    ("unknown platform", lambda d: _cu130(d)["platforms"].update({"solaris-sparc": _cu130(d)["platforms"]
                                                                  ["linux-x86_64"]}), "unknown platform"),
    ("bad default", lambda d: d["releases"]["2.14"]["pypi_default"]["linux-x86_64"].update(value="cu999"),
     "bad value 'cu999'"),
    ("bad arch", lambda d: _cu130(d)["platforms"]["linux-x86_64"].update(cuda_archs=["sm_86"]), '"cuda_archs"'),
    ("ptx not built", lambda d: _cu130(d)["platforms"]["linux-x86_64"].update(ptx="13.0"), '"ptx" must be'),
    ("wrong index", lambda d: _cu130(d).update(index_url="https://example.org/whl/cu130"), "index_url must be"),
    ("backend mismatch", lambda d: _cu130(d).update(uv_backend="cu132"), "uv_backend must name"),
    ("cuda name", lambda d: _cu130(d).update(cuda="13.2"), "is named cu132"),
    ("uncited source", lambda d: d["sources"].update(extra={"short": "x", "title": "x", "url": None}),
     "no fact cites it"),
    ("bad python tag", lambda d: d["releases"]["2.14"]["python"]["pypi"][0]["value"].append("3.x"), "bad value"),
    ("latest of another release", lambda d: d["releases"]["2.14"]["latest"].update(value="2.15.0"), "bad value"),
    ("kind", lambda d: _cu130(d).update(kind="tpu"), "kind must be one of"),
    ("no platforms", lambda d: _cu130(d).update(platforms={}), "at least one platform"),
    ("half a fact", lambda d: d["cuda"]["generations"][0].update(verified=True), '"source" must name'),
    ("torchaudio", lambda d: d["companions"]["torchaudio"].update(last_release="2.11"), "last_release"),
    ("torchvision latest", lambda d: d["companions"]["torchvision"][1].update(latest="0.30.0"), '"latest" must be'),
]


@pytest.mark.parametrize(("change", "expected"), [m[1:] for m in MUTATIONS], ids=[m[0] for m in MUTATIONS])
def test_the_validator_rejects(change, expected):
    problems = _mutated(change)
    assert any(expected in p for p in problems), problems


def test_the_validator_rejects_a_non_object_and_missing_sections():
    assert validate([]) == ["$: the build matrix must be a JSON object"]
    assert any(p.startswith("releases:") for p in validate({k: v for k, v in RAW.items() if k != "releases"}))
