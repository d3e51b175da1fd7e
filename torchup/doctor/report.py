"""The doctor's report as text (for people) or JSON (for CI matrices and tools)."""

from __future__ import annotations

import json
import textwrap
from typing import Any

from torchup.doctor.advice import Plan, Report
from torchup.doctor.matrix import Fact, Matrix
from torchup.doctor.probes import Environment

WIDTH = 116
UNVERIFIED = "unverified"


def _wrap(text: str, first: str, rest: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False,
                         break_long_words=False) or [first.rstrip()]


def _environment_lines(env: Environment) -> list[tuple[str, str]]:
    rows = [("system", f"{env.os} {env.machine} ({env.platform_key})")]
    rows.append(("python", f"{env.python} ({'free-threaded' if env.free_threaded else 'with the GIL'})"
                 + (f" at {env.executable}" if env.executable and "python" not in env.simulated else "")))
    if env.packages_checked:
        rows.append(("environment", f"{env.env_kind}: {env.env_detail}" if env.env_detail else env.env_kind))
        installed = [f"{p.name} {p.version}" + (f" ({p.variant}, from its {p.variant_from})"
                                                  if p.variant and "+" not in p.version else "")
                     for p in env.packages.values()]
        rows.append(("packages", ", ".join(installed) if installed else
                     "torch, torchvision, torchaudio, torchcodec, triton: none installed"))
    else:
        rows.append(("packages", "not checked (simulated Python or platform)"))
    if env.probes:
        rows.append(("probes", "; ".join(f"{p.name}: {p.status}" + (f" ({p.detail})" if p.detail else "")
                                         for p in env.probes)))
    gpus = [f"{g.vendor} {g.name}" + (f", compute capability {g.arch}" if g.vendor == "nvidia" and g.arch else "")
            + (f", driver {g.driver}" if g.driver else "") for g in env.gpus]
    rows.append(("gpus", "; ".join(gpus) if gpus else "none found"))
    if env.simulated:
        rows.append(("what if", "replaced by options: " + ", ".join(env.simulated)))
    return rows


def _plan_lines(title: str, plan: Plan) -> list[str]:
    lines = _wrap(f"{title}: {plan.summary}" + ("" if plan.verified else f"  [{UNVERIFIED}]"), "", "  ")
    lines.append(f"  pip  {plan.pip}")
    lines.append(f"  uv   {plan.uv}")
    return lines


def unverified_facts(report: Report) -> list[Fact]:
    """The unverified facts behind the checks and the commands, each once."""
    facts = dict(report.facts_used)
    for plan in (report.plan, report.alternative):
        for fact in plan.facts if plan is not None else ():
            facts.setdefault(fact.path, fact)
    return [fact for fact in facts.values() if not fact.verified]


def render_text(report: Report, matrix: Matrix, verbose: bool = False) -> str:
    """The report for people; ``verbose`` lists the unverified facts behind it instead of counting them."""
    env = report.environment
    installed = report.installed
    if installed is not None and installed.fits:
        head = f"torch {report.version} (target {report.target}) on this machine: the installed torch " \
               f"{installed.version} fits"
    else:
        head = f"installing torch {report.version} (target {report.target}) on this machine"
    lines = [f"torchup doctor: {head}" + (" (what if)" if env.simulated else ""), "", "Environment"]
    for key, value in _environment_lines(env):
        lines += _wrap(value, f"  {key:<12} ", " " * 15)
    lines += ["", f"Checks for torch {report.target}"]
    for check in report.checks:
        suffix = "" if check.verified else f"  [{UNVERIFIED}]"
        lines += _wrap(check.reason + suffix, f"  {check.verdict:<6} {check.name:<14} ", " " * 24)
    lines.append("")
    if report.nothing_to_install:
        assert installed is not None
        lines += _wrap(f"Nothing to install: {installed.label} is installed and fits torch {report.target} on this "
                       "machine.", "", "  ")
    elif report.plan is not None:
        lines += _plan_lines("Install", report.plan)
        if report.variant_reason:
            lines += _wrap(f"build chosen: {report.variant_reason}", "  ", "    ")
    else:
        lines += _wrap(f"No build of torch {report.target} works for this combination "
                       f"(Python {env.python_tag}, {env.platform_key}"
                       + (f", {report.variant}" if report.variant else "") + "): see the errors above.", "", "  ")
    if report.alternative is not None:
        lines.append("")
        lines += _plan_lines(report.alternative_label[:1].upper() + report.alternative_label[1:], report.alternative)
    elif report.plan is None and not report.nothing_to_install:
        lines.append("No other build in the data works here either.")
    unverified = unverified_facts(report)
    if unverified and not verbose:
        many = len(unverified) != 1
        lines += ["", f"{len(unverified)} fact{'s' if many else ''} behind this report {'are' if many else 'is'} "
                  f"unverified (marked [{UNVERIFIED}]); --verbose lists them"]
    elif unverified:
        lines += ["", "Unverified facts behind this report (marked so in the data; doctor does not guess):"]
        for fact in unverified:
            lines += _wrap(_fact_text(fact, matrix), "  - ", "    ")
        used = sorted({s for fact in unverified for s in fact.sources})
        lines.append("  sources:")
        for sid in used:
            source = matrix.sources[sid]
            lines += _wrap(f"{source['short']}: {source['title']}" + (f" <{source['url']}>" if source["url"] else ""),
                           "    ", "      ")
    errors, warnings = len(report.errors), len(report.warnings)
    state = "problems found" if report.exit_code else "ready"
    if report.nothing_to_install:
        state += ", nothing to install"
    lines += ["", f"Result: {state}: {errors} error(s), {warnings} warning(s) (exit {report.exit_code})"]
    return "\n".join(lines) + "\n"


def _fact_text(fact: Fact, matrix: Matrix) -> str:
    return f"{matrix.describe(fact)} [{matrix.cite(fact)}, {fact.date}; {fact.path}]"


def _plan_dict(plan: Plan | None) -> dict[str, Any] | None:
    if plan is None:
        return None
    return {
        "torch": plan.version,
        "release": plan.release,
        "python": plan.python,
        "platform": plan.platform,
        "variant": plan.variant,
        "index": "pypi" if plan.from_pypi else "pytorch-index",
        "pip": plan.pip,
        "uv": plan.uv,
        "verified": plan.verified,
        "unverified": list(plan.unverified),
        "summary": plan.summary,
    }


def to_json(report: Report, matrix: Matrix) -> dict[str, Any]:
    env, installed = report.environment, report.installed
    return {
        "target": report.target,
        "torch": report.version,
        "environment": {
            "os": env.os,
            "machine": env.machine,
            "platform": env.platform_key,
            "python": env.python,
            "python_tag": env.python_tag,
            "free_threaded": env.free_threaded,
            "environment": env.env_kind,
            "environment_detail": env.env_detail,
            "executable": env.executable,
            "packages": None if not env.packages_checked else {
                name: {"version": p.version, "variant": p.variant, "variant_from": p.variant_from or None}
                for name, p in env.packages.items()},
            "gpus": [{"vendor": g.vendor, "name": g.name, "arch": g.arch, "driver": g.driver} for g in env.gpus],
            "probes": [{"name": p.name, "status": p.status, "detail": p.detail} for p in env.probes],
            "torch_runtime": dict(env.torch_runtime) if env.torch_runtime is not None else None,
            "simulated": list(env.simulated),
        },
        "accelerator": report.accelerator,
        "variant": report.variant,
        "variant_reason": report.variant_reason,
        "checks": [
            {"name": c.name, "verdict": c.verdict, "reason": c.reason, "verified": c.verified, "facts": list(c.facts)}
            for c in report.checks
        ],
        "plan": _plan_dict(report.plan),
        "alternative": _plan_dict(report.alternative),
        "alternative_label": report.alternative_label or None,
        "installed": None if installed is None else {
            "torch": installed.version,
            "variant": installed.variant,
            "index": installed.source,
            "fits": installed.fits,
            "why": installed.why or None,
        },
        "nothing_to_install": report.nothing_to_install,
        "unverified_facts": [
            {"path": f.path, "fact": matrix.describe(f), "sources": list(f.sources), "date": f.date}
            for f in unverified_facts(report)
        ],
        "errors": len(report.errors),
        "warnings": len(report.warnings),
        "exit_code": report.exit_code,
    }


def render_json(report: Report, matrix: Matrix) -> str:
    return json.dumps(to_json(report, matrix), indent=2) + "\n"
