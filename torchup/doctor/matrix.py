"""The build matrix (``data/build_matrix.json``): loading, validation and typed access.

Every object in the file that has a ``"verified"`` key is a *fact*: it names its sources and a date, and says
whether a real wheel was checked. Doctor carries a fact's ``verified`` flag into every verdict built on it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

DATA_PATH = "data/build_matrix.json"
VARIANT_KINDS = ("cpu", "mps", "cuda", "rocm", "xpu")
PYTHON_TAG = re.compile(r"^3\.(\d+)(t?)$")
ARCH = re.compile(r"^\d+\.\d+$")
DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")
RELEASE = re.compile(r"^\d+\.\d+$")
VERSION = re.compile(r"^\d+\.\d+\.\d+$")


@dataclass(frozen=True)
class Fact:
    """One statement of the data, with where it comes from and whether a wheel confirmed it."""

    path: str
    value: Any
    verified: bool
    sources: tuple[str, ...]
    date: str
    note: str = ""
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, path: str, obj: dict[str, Any]) -> Fact:
        source = obj["source"]
        return cls(
            path=path,
            value=obj.get("value"),
            verified=bool(obj["verified"]),
            sources=(source,) if isinstance(source, str) else tuple(source),
            date=obj["date"],
            note=obj.get("note", ""),
            raw=obj,
        )


@dataclass(frozen=True)
class PlatformBuild:
    """The CUDA architectures one release ships for one platform."""

    release: str
    platform: str
    cuda_archs: tuple[str, ...] | None  # None: not known (or not a CUDA build)
    ptx: str | None
    fact: Fact


@dataclass(frozen=True)
class Variant:
    """One build variant of a release (CPU, a CUDA or ROCm version) and its index."""

    release: str
    name: str
    kind: str
    index_url: str
    uv_backend: str
    available: Fact  # value: True, False or None (not known)
    platforms: dict[str, PlatformBuild]
    cuda: str | None = None
    legacy: bool = False

    def on(self, platform: str) -> PlatformBuild | None:
        return self.platforms.get(platform)


def python_key(tag: str) -> tuple[int, int, bool]:
    """``"3.15t"`` -> ``(3, 15, True)``; for sorting and comparing Python tags."""
    match = PYTHON_TAG.match(tag)
    if not match:
        raise ValueError(f"not a Python tag: {tag!r}")
    return 3, int(match.group(1)), bool(match.group(2))


def arch_key(arch: str) -> tuple[int, int]:
    major, minor = arch.split(".")
    return int(major), int(minor)


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


class Matrix:
    """Typed questions over the build matrix; the raw JSON stays in ``data``."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.sources: dict[str, dict[str, Any]] = data["sources"]
        self.platforms: dict[str, dict[str, Any]] = data["platforms"]
        self.index_url_base: str = data["index_url_base"]
        self._variant_cache: dict[str, dict[str, Variant]] = {}

    # releases ------------------------------------------------------------------------------------------------
    @property
    def releases(self) -> list[str]:
        return sorted(self.data["releases"], key=version_key)

    @property
    def newest(self) -> str:
        return self.releases[-1]

    def _release(self, release: str) -> dict[str, Any]:
        return self.data["releases"][release]

    def fact(self, release: str, *keys: str) -> Fact:
        obj: Any = self._release(release)
        for key in keys:
            obj = obj[key]
        return Fact.of(f"releases.{release}.{'.'.join(keys)}", obj)

    def latest(self, release: str) -> Fact:
        return self.fact(release, "latest")

    def requires_python(self, release: str) -> Fact:
        return self.fact(release, "requires_python")

    def compile_python_below(self, release: str) -> Fact:
        return self.fact(release, "torch_compile", "python_below")

    def compile_free_threaded_min(self, release: str) -> Fact:
        return self.fact(release, "torch_compile", "free_threaded_min")

    def cuda_arch_floor(self, release: str) -> Fact | None:
        """No CUDA build of ``release`` has kernels below this compute capability (None: not stated)."""
        if "cuda_arch_floor" not in self._release(release):
            return None
        return self.fact(release, "cuda_arch_floor")

    def triton(self, release: str) -> Fact | None:
        if "triton" not in self._release(release):
            return None
        return self.fact(release, "triton")

    def cpp_extension_archs(self, release: str) -> Fact | None:
        if "cpp_extension_archs" not in self._release(release):
            return None
        return self.fact(release, "cpp_extension_archs")

    # Python --------------------------------------------------------------------------------------------------
    def python_facts(self, release: str, where: str) -> list[Fact]:
        entries = self._release(release)["python"][where]
        return [Fact.of(f"releases.{release}.python.{where}[{i}]", entry) for i, entry in enumerate(entries)]

    def python_on(self, release: str, where: str, tag: str) -> Fact | None:
        """The fact that lists Python ``tag`` for ``release`` on ``where`` ("pypi" or "pytorch_index")."""
        for fact in self.python_facts(release, where):
            if tag in fact.value:
                return fact
        return None

    def python_tags(self, release: str) -> list[str]:
        tags = {tag for where in ("pypi", "pytorch_index") for fact in self.python_facts(release, where)
                for tag in fact.value}
        return sorted(tags, key=python_key)

    # variants ------------------------------------------------------------------------------------------------
    def variants(self, release: str) -> dict[str, Variant]:
        return _variants(self, release)

    def variant(self, release: str, name: str) -> Variant | None:
        return self.variants(release).get(name)

    def accelerators(self) -> list[str]:
        names = {name for release in self.releases for name in self._release(release)["variants"]}
        return sorted(names, key=_accelerator_order)

    def pypi_default(self, release: str, platform: str) -> Fact | None:
        entry = self._release(release).get("pypi_default", {}).get(platform)
        return None if entry is None else Fact.of(f"releases.{release}.pypi_default.{platform}", entry)

    # CUDA ----------------------------------------------------------------------------------------------------
    def generation(self, arch: str) -> str:
        major, minor = arch_key(arch)
        for gen in self.data["cuda"]["generations"]:
            if gen["major"] != major:
                continue
            if "minor_below" in gen and minor >= gen["minor_below"]:
                continue
            if "minor_from" in gen and minor < gen["minor_from"]:
                continue
            return str(gen["name"])
        return "unknown generation"

    def runs_kernels_of(self, arch: str) -> Fact | None:
        for i, entry in enumerate(self.data["cuda"]["runs_kernels_of"]):
            if entry["arch"] == arch:
                return Fact.of(f"cuda.runs_kernels_of[{i}]", entry)
        return None

    def binary_compatibility(self) -> Fact:
        return Fact.of("cuda.binary_compatibility", self.data["cuda"]["binary_compatibility"])

    def rubin_inductor(self) -> Fact:
        return Fact.of("cuda.rubin_inductor", self.data["cuda"]["rubin_inductor"])

    # companions ----------------------------------------------------------------------------------------------
    def torchvision_for(self, torch_release: str) -> Fact | None:
        for i, entry in enumerate(self.data["companions"]["torchvision"]):
            if entry["torch"] == torch_release:
                return Fact.of(f"companions.torchvision[{i}]", entry)
        return None

    def torchcodec_for(self, torch_release: str) -> Fact | None:
        for i, entry in enumerate(self.data["companions"]["torchcodec"]):
            if entry["torch"] == torch_release:
                return Fact.of(f"companions.torchcodec[{i}]", entry)
        return None

    def torchaudio(self) -> Fact:
        return Fact.of("companions.torchaudio", self.data["companions"]["torchaudio"])

    def describe(self, fact: Fact) -> str:
        """A fact as a sentence: what it states, then its note."""
        text = ""
        if match := re.match(r"^releases\.(\d+\.\d+)\.variants\.(.+)\.available$", fact.path):
            release, variant = match.groups()
            article = "an" if variant[0] in "aeiomx" else "a"
            text = {True: f"torch {release} has {article} {variant} build",
                    False: f"torch {release} has no {variant} build",
                    None: f"whether torch {release} has a {variant} build is not known"}[fact.value]
        elif match := re.match(r"^releases\.(\d+\.\d+)\.variants\.(.+)\.platforms\.([a-z0-9_-]+)$", fact.path):
            release, variant, platform = match.groups()
            text = f"torch {release}'s {variant} build is made for {platform}"
            archs = fact.raw.get("cuda_archs", False)
            if archs:
                text += ", with kernels for " + ", ".join("sm_" + a.replace(".", "") for a in archs)
            elif archs is None:
                text += "; its GPU architectures are not known"
        elif match := re.match(r"^releases\.(\d+\.\d+)\.python\.(pypi|pytorch_index)\[\d+\]$", fact.path):
            release, where = match.groups()
            index = "the package index (PyPI)" if where == "pypi" else "the PyTorch index"
            text = f"torch {release} has wheels for Python {', '.join(fact.value)} on {index}"
        elif match := re.match(r"^releases\.(\d+\.\d+)\.pypi_default\.([a-z0-9_-]+)$", fact.path):
            release, platform = match.groups()
            text = f"the package-index build of torch {release} for {platform} is {fact.value}"
        elif match := re.match(r"^releases\.(\d+\.\d+)\.released$", fact.path):
            text = f"torch {match.group(1)} was released in {fact.value}"
        elif match := re.match(r"^companions\.(torchvision|torchcodec)\[\d+\]$", fact.path):
            name = match.group(1)
            how = "is declared ABI-compatible with" if fact.raw.get("abi_compatible") else "pairs with"
            text = f"{name} {fact.raw[name]} {how} torch {fact.raw['torch']}"
        if not text:
            return fact.note or f"{fact.path} = {fact.value}"
        return f"{text} ({fact.note})" if fact.note else text

    def source_titles(self, fact: Fact) -> list[str]:
        return [self.sources[s]["title"] for s in fact.sources]

    def cite(self, fact: Fact) -> str:
        """The fact's sources, short: "pytorch/pytorch#190654", "wheel 2.14.1+cu130"."""
        return ", ".join(self.sources[s]["short"] for s in fact.sources)

    def unverified_facts(self) -> list[Fact]:
        return [fact for fact in iter_facts(self.data) if not fact.verified]


def _accelerator_order(name: str) -> tuple[int, str]:
    order = {"cpu": 0, "mps": 5}
    if name.startswith("cu"):
        return 1, name
    if name.startswith("rocm"):
        return 2, name
    if name == "xpu":
        return 3, name
    return order.get(name, 9), name


def _variants(matrix: Matrix, release: str) -> dict[str, Variant]:
    store = matrix._variant_cache
    if release in store:
        return store[release]
    result: dict[str, Variant] = {}
    for name, raw in matrix.data["releases"][release]["variants"].items():
        base = f"releases.{release}.variants.{name}"
        platforms = {}
        for plat, build in raw["platforms"].items():
            archs = build.get("cuda_archs")
            platforms[plat] = PlatformBuild(
                release=release,
                platform=plat,
                cuda_archs=None if archs is None else tuple(archs),
                ptx=build.get("ptx"),
                fact=Fact.of(f"{base}.platforms.{plat}", build),
            )
        result[name] = Variant(
            release=release,
            name=name,
            kind=raw["kind"],
            index_url=raw["index_url"],
            uv_backend=raw["uv_backend"],
            available=Fact.of(f"{base}.available", raw["available"]),
            platforms=platforms,
            cuda=raw.get("cuda"),
            legacy=bool(raw.get("legacy", False)),
        )
    store[release] = result
    return result


def iter_facts(obj: Any, path: str = "") -> list[Fact]:
    """Every fact (an object with a ``"verified"`` key) in ``obj``, depth first."""
    found: list[Fact] = []
    if isinstance(obj, dict):
        if "verified" in obj and "source" in obj and "date" in obj:
            found.append(Fact.of(path, obj))
        for key, value in obj.items():
            if not key.startswith("_"):
                found.extend(iter_facts(value, f"{path}.{key}" if path else key))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            found.extend(iter_facts(value, f"{path}[{i}]"))
    return found


@cache
def load() -> Matrix:
    """The packaged build matrix (validated; a broken file is a bug, reported as ValueError)."""
    text = resources.files("torchup").joinpath(DATA_PATH).read_text(encoding="utf-8")
    data = json.loads(text)
    problems = validate(data)
    if problems:
        raise ValueError(f"{DATA_PATH} is invalid: " + "; ".join(problems[:5]))
    return Matrix(data)


# validation (stdlib only) ------------------------------------------------------------------------------------


def validate(data: Any) -> list[str]:
    """Every way ``data`` breaks the build-matrix schema, as ``"path: problem"`` lines (empty when valid)."""
    problems: list[str] = []

    def err(path: str, message: str) -> None:
        problems.append(f"{path}: {message}")

    if not isinstance(data, dict):
        return ["$: the build matrix must be a JSON object"]
    for key, kind in (("schema", int), ("date", str), ("index_url_base", str), ("sources", dict),
                      ("platforms", dict), ("releases", dict), ("cuda", dict), ("companions", dict)):
        if not isinstance(data.get(key), kind):
            err(key, f"missing or not a {kind.__name__}")
    if problems:
        return problems
    sources = data["sources"]
    cited = {sid for _, obj in _fact_like(data) for sid in
             ([obj.get("source")] if isinstance(obj.get("source"), str) else obj.get("source") or [])}
    for sid, src in sources.items():
        if not isinstance(src, dict) or not all(isinstance(src.get(k), str) and src[k] for k in ("short", "title")):
            err(f"sources.{sid}", "needs a short name and a title")
        elif sid not in cited:
            err(f"sources.{sid}", "no fact cites it")
        elif not (src.get("url") is None or str(src["url"]).startswith("https://")):
            err(f"sources.{sid}", "url must be https:// or null")

    def check_fact(path: str, obj: Any, value_check: Any = None) -> bool:
        if not isinstance(obj, dict):
            err(path, "must be a fact object")
            return False
        if not isinstance(obj.get("verified"), bool):
            err(path, '"verified" must be true or false')
        source = obj.get("source")
        ids = [source] if isinstance(source, str) else source
        if not isinstance(ids, list) or not ids or not all(isinstance(s, str) for s in ids):
            err(path, '"source" must name one or more sources')
        else:
            for sid in ids:
                if sid not in sources:
                    err(path, f"unknown source {sid!r}")
        if not isinstance(obj.get("date"), str) or not DATE.match(obj["date"]):
            err(path, '"date" must be YYYY-MM-DD or YYYY-MM')
        if "note" in obj and not isinstance(obj["note"], str):
            err(path, '"note" must be a string')
        if value_check is not None and not value_check(obj.get("value")):
            err(path, f"bad value {obj.get('value')!r}")
        return True

    # Any object that looks like a fact anywhere must be a complete one.
    for fact_path, obj in _fact_like(data):
        check_fact(fact_path, obj)

    platforms = data["platforms"]
    for plat, info in platforms.items():
        if not isinstance(info, dict) or not all(isinstance(info.get(k), str) for k in ("title", "os", "machine")):
            err(f"platforms.{plat}", "needs title, os and machine")
    base = data["index_url_base"]
    if not base.startswith("https://") or not base.endswith("/"):
        err("index_url_base", "must be an https:// URL ending in /")

    def is_tag_list(value: Any) -> bool:
        return isinstance(value, list) and bool(value) and all(isinstance(t, str) and PYTHON_TAG.match(t)
                                                                for t in value)

    for release, rel in data["releases"].items():
        rp = f"releases.{release}"
        if not RELEASE.match(release) or not isinstance(rel, dict):
            err(rp, "release keys are X.Y and map to objects")
            continue
        check_fact(f"{rp}.latest", rel.get("latest"),
                   lambda v, r=release: isinstance(v, str) and VERSION.match(v) and v.startswith(r + "."))
        check_fact(f"{rp}.released", rel.get("released"), lambda v: isinstance(v, str) and DATE.match(v))
        check_fact(f"{rp}.requires_python", rel.get("requires_python"),
                   lambda v: isinstance(v, str) and PYTHON_TAG.match(v) and not v.endswith("t"))
        compile_ = rel.get("torch_compile")
        if not isinstance(compile_, dict):
            err(f"{rp}.torch_compile", "missing")
        else:
            check_fact(f"{rp}.torch_compile.python_below", compile_.get("python_below"),
                       lambda v: isinstance(v, str) and PYTHON_TAG.match(v) and not v.endswith("t"))
            check_fact(f"{rp}.torch_compile.free_threaded_min", compile_.get("free_threaded_min"),
                       lambda v: isinstance(v, str) and VERSION.match(v))
        if "cuda_arch_floor" in rel:
            check_fact(f"{rp}.cuda_arch_floor", rel["cuda_arch_floor"], lambda v: isinstance(v, str) and ARCH.match(v))
        if "cpp_extension_archs" in rel:
            ext = rel["cpp_extension_archs"]
            check_fact(f"{rp}.cpp_extension_archs", ext, lambda v: v is None or (
                isinstance(v, list) and all(isinstance(a, str) and ARCH.match(a) for a in v)))
            if isinstance(ext, dict) and not (ext.get("named") is None or isinstance(ext.get("named"), dict)):
                err(f"{rp}.cpp_extension_archs", '"named" must map names to arch lists, or be null')
            if isinstance(ext, dict) and ext.get("value") is None and ext.get("verified"):
                err(f"{rp}.cpp_extension_archs", "an unknown list (null) cannot be verified")
        python = rel.get("python")
        if not isinstance(python, dict) or set(python) != {"pypi", "pytorch_index"}:
            err(f"{rp}.python", 'needs exactly "pypi" and "pytorch_index"')
        else:
            for where, entries in python.items():
                if not isinstance(entries, list) or not entries:
                    err(f"{rp}.python.{where}", "must be a non-empty list of facts")
                    continue
                for i, entry in enumerate(entries):
                    check_fact(f"{rp}.python.{where}[{i}]", entry, is_tag_list)
        variants = rel.get("variants")
        if not isinstance(variants, dict) or not variants:
            err(f"{rp}.variants", "missing")
            continue
        for name, var in variants.items():
            vp = f"{rp}.variants.{name}"
            if not isinstance(var, dict):
                err(vp, "must be an object")
                continue
            if var.get("kind") not in VARIANT_KINDS:
                err(vp, f"kind must be one of {', '.join(VARIANT_KINDS)}")
            url = var.get("index_url")
            if not isinstance(url, str) or not url.startswith(base) or not url[len(base):]:
                err(vp, f"index_url must be {base}<variant>")
            if not isinstance(var.get("uv_backend"), str) or not var["uv_backend"]:
                err(vp, "needs uv_backend")
            elif isinstance(url, str) and url[len(base):] != var["uv_backend"]:
                err(vp, "uv_backend must name the same index as index_url")
            if var.get("kind") == "cuda" and not (isinstance(var.get("cuda"), str) and ARCH.match(var["cuda"])):
                err(vp, 'a CUDA variant needs "cuda": "X.Y"')
            if var.get("kind") == "cuda" and var.get("cuda") and name != "cu" + var["cuda"].replace(".", ""):
                err(vp, f"a CUDA {var['cuda']} variant is named cu{var['cuda'].replace('.', '')}")
            available = var.get("available")
            check_fact(f"{vp}.available", available, lambda v: v in (True, False, None))
            if isinstance(available, dict) and available.get("value") is None and available.get("verified"):
                err(f"{vp}.available", "an unknown availability (null) cannot be verified")
            plats = var.get("platforms")
            if not isinstance(plats, dict):
                err(f"{vp}.platforms", "must be an object")
                continue
            if isinstance(available, dict) and available.get("value") is True and not plats:
                err(f"{vp}.platforms", "an available variant needs at least one platform")
            for plat, build in plats.items():
                pp = f"{vp}.platforms.{plat}"
                if plat not in platforms:
                    err(pp, "unknown platform")
                if not check_fact(pp, build):
                    continue
                if var.get("kind") == "cuda":
                    if "cuda_archs" not in build:
                        err(pp, 'a CUDA build needs "cuda_archs" (null when not known)')
                    archs = build.get("cuda_archs")
                    if archs is not None and (not isinstance(archs, list) or not archs
                                              or not all(isinstance(a, str) and ARCH.match(a) for a in archs)):
                        err(pp, '"cuda_archs" must be a list of "X.Y" or null')
                    if archs is None and build.get("verified"):
                        err(pp, "unknown architectures (null) cannot be verified")
                    ptx = build.get("ptx")
                    if ptx is not None and (not isinstance(archs, list) or ptx not in archs):
                        err(pp, '"ptx" must be one of "cuda_archs" or null')
                elif "cuda_archs" in build:
                    err(pp, "only CUDA builds have cuda_archs")
        for plat, entry in rel.get("pypi_default", {}).items():
            dp = f"{rp}.pypi_default.{plat}"
            if plat not in platforms:
                err(dp, "unknown platform")
            check_fact(dp, entry, lambda v, vs=variants: v in vs)
            if isinstance(entry, dict) and entry.get("value") in variants:
                default = variants[entry["value"]]
                if plat not in default.get("platforms", {}):
                    err(dp, f"variant {entry['value']} is not built for {plat}")
    _validate_cuda(data["cuda"], err, check_fact)
    _validate_companions(data["companions"], err, check_fact)
    return problems


def _fact_like(obj: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(obj, dict):
        if path and path != "sources" and not path.startswith("sources.") and (
            "verified" in obj or "source" in obj
        ):
            found.append((path, obj))
        for key, value in obj.items():
            if not key.startswith("_") and key != "sources":
                found.extend(_fact_like(value, f"{path}.{key}" if path else key))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            found.extend(_fact_like(value, f"{path}[{i}]"))
    return found


def _validate_cuda(cuda: dict[str, Any], err: Any, check_fact: Any) -> None:
    gens = cuda.get("generations")
    if not isinstance(gens, list) or not all(isinstance(g, dict) and isinstance(g.get("name"), str)
                                             and isinstance(g.get("major"), int) for g in gens):
        err("cuda.generations", "must list {name, major[, minor_below, minor_from]}")
    runs = cuda.get("runs_kernels_of")
    if not isinstance(runs, list):
        err("cuda.runs_kernels_of", "must be a list")
    else:
        for i, entry in enumerate(runs):
            path = f"cuda.runs_kernels_of[{i}]"
            check_fact(path, entry)
            if not (isinstance(entry, dict) and all(isinstance(entry.get(k), str) and ARCH.match(entry[k])
                                                    for k in ("arch", "runs"))):
                err(path, 'needs "arch" and "runs" as "X.Y"')
    check_fact("cuda.binary_compatibility", cuda.get("binary_compatibility"))
    check_fact("cuda.rubin_inductor", cuda.get("rubin_inductor"), lambda v: isinstance(v, dict))


def _validate_companions(companions: dict[str, Any], err: Any, check_fact: Any) -> None:
    for name in ("torchvision", "torchcodec"):
        entries = companions.get(name)
        if not isinstance(entries, list) or not entries:
            err(f"companions.{name}", "must be a non-empty list")
            continue
        for i, entry in enumerate(entries):
            path = f"companions.{name}[{i}]"
            check_fact(path, entry)
            if not isinstance(entry, dict) or not RELEASE.match(str(entry.get("torch"))) \
                    or not RELEASE.match(str(entry.get(name))):
                err(path, f'needs "torch" and "{name}" as X.Y')
            elif "latest" in entry and not (VERSION.match(str(entry["latest"]))
                                            and str(entry["latest"]).startswith(entry[name] + ".")):
                err(path, f'"latest" must be a {entry[name]}.N version')
    audio = companions.get("torchaudio")
    check_fact("companions.torchaudio", audio)
    if isinstance(audio, dict) and not (isinstance(audio.get("discontinued"), bool)
                                        and VERSION.match(str(audio.get("last_release")))
                                        and RELEASE.match(str(audio.get("last_torch")))):
        err("companions.torchaudio", "needs discontinued, last_release (X.Y.Z) and last_torch (X.Y)")
