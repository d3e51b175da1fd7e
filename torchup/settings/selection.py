"""Which rules run: ``--select`` / ``--extend-select`` / ``--ignore`` with codes or prefixes."""

from __future__ import annotations

from collections.abc import Sequence

from torchup.analysis.rule import Rule
from torchup.core import torchfix


class SelectionError(ValueError):
    pass


def _matches(rule: Rule, selector: str) -> bool:
    selector = selector.strip().upper()
    return selector == "ALL" or rule.code.startswith(selector)


def _check_known(rules: Sequence[Rule], selectors: Sequence[str], option: str) -> None:
    for selector in selectors:
        if not any(_matches(rule, selector) for rule in rules):
            known = ", ".join(rule.code for rule in rules)
            raise SelectionError(f"{option} {selector!r} matches no rule; known codes: {known}")


def select_rules(
    rules: Sequence[Rule],
    select: Sequence[str] | None = None,
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    *,
    from_version: str | None = None,
) -> list[Rule]:
    """The rules that run. Without ``select``, those on by default for code that runs on
    ``from_version`` today (``Rule.on_by_default``; None: as old as can be, so every rule on by
    default); a rule that ``select`` or ``extend_select`` names runs whatever the from-version.
    TorchFix's codes stand for the torchup rules that report the same (torchup.core.torchfix)."""
    try:
        select = torchfix.translate(select, "--select") if select else select
        extend_select = torchfix.translate(extend_select, "--extend-select")
        ignore = torchfix.translate(ignore, "--ignore")
    except ValueError as exc:
        raise SelectionError(str(exc)) from None
    _check_known(rules, select or (), "--select")
    _check_known(rules, extend_select, "--extend-select")
    _check_known(rules, ignore, "--ignore")
    if select:
        chosen = [rule for rule in rules if any(_matches(rule, s) for s in select)]
        # A file that could not be read or parsed is never silently "clean": the engine's own
        # findings (TU000, TU001) stay unless ignored by name, as ruff keeps its syntax errors.
        chosen += [rule for rule in rules if rule.engine_emitted and rule.enabled_by_default and rule not in chosen]
    else:
        chosen = [rule for rule in rules if rule.on_by_default(from_version)]
    chosen += [rule for rule in rules if rule not in chosen and any(_matches(rule, s) for s in extend_select)]
    # A more specific selector wins over a broader ignore, as in ruff: --ignore TU1 --select TU101.
    def specificity(rule: Rule, selectors: Sequence[str]) -> int:
        return max((len(s) for s in selectors if _matches(rule, s)), default=-1)

    kept = []
    for rule in chosen:
        ignored = specificity(rule, ignore)
        selected = specificity(rule, [*(select or ()), *extend_select])
        if ignored < 0 or selected > ignored:
            kept.append(rule)
    return sorted(kept, key=lambda rule: rule.code)


def split_codes(values: Sequence[str] | None) -> list[str]:
    """``--select TU1,TU2 --select TU3`` -> ['TU1', 'TU2', 'TU3']."""
    codes: list[str] = []
    for value in values or ():
        codes += [part.strip() for part in value.split(",") if part.strip()]
    return codes
