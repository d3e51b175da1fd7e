"""Run the fixable rule examples that CI cannot, and write their results to ``docs/proofs.md``.

CI installs torch 2.13.0 and 2.14.1 only; an example whose ``versions`` name another release (the
original under torch 2.5, say, because the change came in 2.6) is skipped there and runs here:
the original under ``versions[0]``, the fixed code under ``versions[1]`` and again under ``versions[0]``
(the floor of a project that runs there: the fix must run there too, or torchup must withhold it from
such a project), each the newest patch of its minor (tests/differential/envs.py), with the same probe
and comparison as tests/test_differential.py (tests/differential/harness.py). The venvs go under
~/.cache/torchup/envs ($TORCHUP_TORCH_ENVS); an old release is a CUDA build of several GB.

    python3 tools/run_examples.py                       # every example CI cannot run
    python3 tools/run_examples.py --codes TU601,TU602   # only these rules' (other entries are kept)
    python3 tools/run_examples.py --keep-envs           # keep the venvs it made (default: removed)

Envs that existed before the run are reused and never removed, nor are CI's two (2.13.0, 2.14.1),
which the tests reuse; any other the run makes is removed as soon as no later pair of releases
needs it, so at most one old release is on disk at a time.
Committing docs/proofs.md is the maintainer's job; tests/test_proofs.py fails while it is stale.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for _path in (ROOT, ROOT / "tests"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from differential import envs, harness, proofs  # noqa: E402  (after the path is set)
from differential.harness import Case  # noqa: E402
from differential.proofs import Proof  # noqa: E402
from torchup.analysis.fix_window import NEEDS_NOTE  # noqa: E402
from torchup.api import check_source  # noqa: E402


def chosen_cases(all_cases: dict[str, Case], codes: list[str] | None) -> dict[str, Case]:
    """The cases CI cannot run, of the given rules only where codes are given."""
    return {
        name: c for name, c in all_cases.items()
        if not harness.ci_runs(c.versions) and (codes is None or c.code in codes)
    }


def last_uses(grouped: list[tuple[str, str]]) -> dict[str, int]:
    """For each release, the index of the last pair that needs it: after that pair it may go."""
    last: dict[str, int] = {}
    for index, pair in enumerate(grouped):
        for version in pair:
            last[version] = index
    return last


def _probe(python: Path, snippets: dict[str, str]) -> tuple[str, dict[str, Any], dict[str, str]]:
    """(torch version, results by case, why a case got none): a probe that fails as a whole is
    retried case by case, so one crashing snippet costs only its own result."""
    failures: dict[str, str] = {}
    completed = _run_probe(python, snippets)
    if completed.returncode == 0:
        out = json.loads(completed.stdout)
        return out["torch"], out["results"], failures
    version, results = "", {}
    for case, source in snippets.items():
        alone = _run_probe(python, {case: source})
        if alone.returncode == 0:
            out = json.loads(alone.stdout)
            version = out["torch"]
            results.update(out["results"])
        else:
            tail = (alone.stderr.strip().splitlines() or [f"exit status {alone.returncode}"])[-1]
            failures[case] = f"the probe failed (exit status {alone.returncode}): {_clean(tail)}"
    return version, results, failures


def _run_probe(python: Path, snippets: dict[str, str]) -> subprocess.CompletedProcess[str]:
    try:
        return harness.run_probe(python, snippets)
    except subprocess.TimeoutExpired as error:
        return subprocess.CompletedProcess(error.cmd, -1, "", f"timed out after {error.timeout} s")


def _clean(text: str) -> str:
    """One line of a message, without terminal escapes (torch colours some) or the machine's paths to
    the venv (an ImportError names the module's file), at most 300 characters."""
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
    text = re.sub(r"/[^\s()'\"]*/site-packages/", ".../site-packages/", text)
    text = "".join(ch if ch.isprintable() else " " for ch in text).strip()
    return text if len(text) <= 300 else text[:297] + "..."


def _variants(variants: list[str], total: int) -> str:
    if len(variants) == total:
        return f"all {total} variants" if total > 1 else "its one variant"
    return f"{len(variants)} variants: {', '.join(variants)}"


def _grouped(lines: list[str], total: int) -> list[str]:
    """'variant: what' lines, one a distinct what, with the variants it came from."""
    seen: dict[str, list[str]] = {}
    plain = []
    for line in lines:
        variant, sep, what = line.partition(": ")
        if sep and " " not in variant:
            seen.setdefault(_clean(what), []).append(variant)
        else:
            plain.append(_clean(line))
    return [f"{what} ({_variants(variants, total)})" for what, variants in seen.items()] + plain


def _errors(runs: dict[str, Any]) -> list[str]:
    """The distinct exceptions of a case's runs, with the variants each came from."""
    raised = [f"{v}: {r['error']}" + (f": {r['message']}" if r["message"] else "")
              for v, r in runs.items() if not r["ok"]]
    return _grouped(raised, len(runs))


def judge(case: Case, torch: tuple[str, str], old: dict[str, Any], new: dict[str, Any],
          unfixed: dict[str, Any] | None, date: str) -> Proof:
    """A case's entry from its three runs (unfixed: the control, None where it did not run)."""
    base = {"case": case.case, "code": case.code, "rule": case.rule, "title": case.title,
            "fingerprint": case.fingerprint, "versions": case.versions, "date": date, "torch": torch,
            "variants": tuple(old)}
    if not any(record["ok"] for record in old.values()):
        return Proof(**base, result="original failed",
                     details=tuple(f"the original raised {e}" for e in _errors(old)))
    problems = harness.differences(old, new, bit_exact=case.bit_exact)
    if unfixed is None:
        control = ""
    elif changed := harness.changed(old, unfixed):
        raised = [e.rpartition(" (")[0] for e in _errors({v: unfixed[v] for v in changed})]
        control = (f"the original, unfixed, changes on torch {torch[1]} in {_variants(changed, len(old))}"
                   + (f"; it raises {'; '.join(raised)}" if raised else " (other values)"))
    else:
        expected = "as expected" if case.change not in harness.BREAKING else "these inputs do not show the change"
        control = f"the original, unfixed, computes the same on torch {torch[1]} ({case.change}: {expected})"
    return Proof(**base, result="differs" if problems else "same", details=tuple(_grouped(problems, len(old))),
                 control=control)


def on_floor(proof: Proof, case: Case, old: dict[str, Any], fixed: dict[str, Any] | None, failed: str | None) -> Proof:
    """``proof`` with what the fixed code does under the original's release: the same as the original
    there, or not, and then whether torchup withholds the fix from a project with that floor
    (torchup.analysis.fix_window) — it must, or the fix is offered where it does not run."""
    if fixed is None:
        return replace(proof, floor="not run", floor_details=(failed or "the probe gave no result",))
    problems = harness.differences(old, fixed, bit_exact=case.bit_exact)
    if not problems:
        return replace(proof, floor="same")
    floor = ".".join(case.versions[0].split(".")[:2])
    found = [d for d in check_source(case.source, path="snippet.py", select=[case.code], from_version=floor)
             if d.code == case.code]
    notes = [note for d in found for note in d.notes if note.startswith(NEEDS_NOTE)]
    if found and all(d.fix is None for d in found) and notes:
        return replace(proof, floor="withheld", floor_details=(notes[0], *_grouped(problems, len(old))))
    return replace(proof, floor="differs", floor_details=(
        f"torchup offers this fix to a project whose floor is {floor}, where it does not run",
        *_grouped(problems, len(old))))


def not_run(case: Case, date: str, why: str, torch: tuple[str, str] = ("", "")) -> Proof:
    return Proof(case=case.case, code=case.code, rule=case.rule, title=case.title, fingerprint=case.fingerprint,
                 versions=case.versions, result="not run", date=date, torch=torch, details=(why,))


class Envs:
    """The venvs of one run: made on demand, the ones it made removed after their last use."""

    def __init__(self, keep: bool) -> None:
        self.keep = keep
        self.created: list[str] = []
        self.failed: dict[str, str] = {}

    def python(self, version: str) -> Path:
        if version in self.failed:
            raise RuntimeError(self.failed[version])
        if not envs.env_ready(version):
            self.created.append(version)
            print(f"installing torch {version} in {envs.env_path(version)} (a few GB) ...", flush=True)
            start = datetime.datetime.now()
            try:
                python = envs.ensure_env(version)
            except (subprocess.CalledProcessError, RuntimeError, OSError) as error:
                self.failed[version] = f"installing torch {version} failed: {error}"
                self.release(version)
                raise RuntimeError(self.failed[version]) from error
            print(f"  done in {(datetime.datetime.now() - start).seconds} s, {_size(envs.env_path(version))}")
            return python
        return envs.env_path(version) / "bin" / "python"

    def release(self, version: str) -> None:
        """Removes the env of a release this run made (CI's two stay: the tests use them)."""
        if version in envs.TORCH_VERSIONS or version not in self.created or self.keep:
            return
        if envs.env_path(version).exists():
            print(f"removing {envs.env_path(version)} (made by this run; --keep-envs keeps it)")
            shutil.rmtree(envs.env_path(version))


def _size(path: Path) -> str:
    total = sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())
    return f"{total / 2**30:.1f} GiB"


def run(chosen: dict[str, Case], keep: bool) -> dict[str, Proof]:
    date = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    grouped = harness.pairs(chosen.values())
    order = list(grouped)
    last = last_uses(order)
    environments = Envs(keep)
    results: dict[str, Proof] = {}
    try:
        for index, ((before, target), cases) in enumerate(grouped.items()):
            print(f"torch {before} -> {target}: {', '.join(c.case for c in cases)}", flush=True)
            try:
                old_python, new_python = environments.python(before), environments.python(target)
            except RuntimeError as error:
                results.update({c.case: not_run(c, date, str(error)) for c in cases})
                continue
            old_torch, old, old_failed = _probe(old_python, {c.case: c.source for c in cases})
            new_torch, new, new_failed = _probe(new_python, {c.case: c.fixed for c in cases})
            _, unfixed, _ = _probe(new_python, {c.case: c.source for c in cases})
            _, at_floor, floor_failed = _probe(old_python, {c.case: c.fixed for c in cases})
            for c in cases:
                if c.case in old_failed or c.case in new_failed:
                    why = "; ".join(f"{side}: {failed[c.case]}" for side, failed in
                                    (("original", old_failed), ("fixed", new_failed)) if c.case in failed)
                    results[c.case] = not_run(c, date, why, (old_torch, new_torch))
                else:
                    results[c.case] = on_floor(
                        judge(c, (old_torch, new_torch), old[c.case], new[c.case], unfixed.get(c.case), date),
                        c, old[c.case], at_floor.get(c.case), floor_failed.get(c.case),
                    )
                print(f"  {c.case}: {results[c.case].result}", flush=True)
            for version in {before, target}:
                if last[version] == index:
                    environments.release(version)
    finally:
        for version in environments.created:
            environments.release(version)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--codes", help="comma-separated rule codes (default: every example CI cannot run)")
    parser.add_argument("--keep-envs", action="store_true", help="keep the venvs this run makes")
    parser.add_argument("--output", type=Path, default=proofs.PROOFS, help="the page to write (docs/proofs.md)")
    args = parser.parse_args(argv)
    codes = [code.strip().upper() for code in args.codes.split(",") if code.strip()] if args.codes else None

    from helpers import fix
    from torchup.rules import all_rules

    all_cases = harness.cases(all_rules(), fix)
    chosen = chosen_cases(all_cases, codes)
    for code in codes or []:
        if not any(c.code == code for c in chosen.values()):
            print(f"{code}: no fixable, executable example that CI cannot run (CI runs 2.13 -> 2.14)")
    results = run(chosen, args.keep_envs) if chosen else {}

    # Entries of examples that still need one and were not run now are kept; others are dropped.
    still = chosen_cases(all_cases, None)
    kept = {case: p for case, p in proofs.read(args.output).items() if case in still and case not in results}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(proofs.render({**kept, **results}), encoding="utf-8")
    tally = {result: sum(p.result == result for p in results.values()) for result in proofs.RESULTS}
    print(f"wrote {args.output}: {', '.join(f'{n} {r}' for r, n in tally.items() if n) or 'nothing run'}")
    return 0 if all(p.result == "same" for p in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
