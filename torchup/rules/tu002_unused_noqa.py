"""TU002: a suppression comment naming a torchup code that silenced nothing (made by the engine)."""

from torchup.analysis.rule import Example, FixAvailability, Rule, RuleDocs
from torchup.core.diagnostics import Severity


class UnusedNoqa(Rule):
    code = "TU002"
    name = "unused-noqa"
    summary = "A `# noqa: TU...` or `# torchup: noqa: TU...` that suppresses nothing (off by default)."
    since = None
    enabled_by_default = False
    severity = Severity.WARNING
    fix_availability = FixAvailability.SAFE
    engine_emitted = True
    docs = RuleDocs(
        what="""
        Reports a torchup code in a suppression comment that silenced no finding: in a
        `# noqa: TU101` at the end of a line, or in a `# torchup: noqa: TU101` on a line of its own
        (which covers the whole file). Also reported: a `TU` code that is not a torchup rule (a typo),
        and a code named twice in one comment.

        Not reported, so that the comment can be shared with ruff and flake8:
        - codes of other tools (`E501`, `F401`, `RUF100`...) in the same comment;
        - a bare `# noqa` (or `# noqa:` followed by no code), which may be there for another tool;
        - the code of a rule that did not run on the file: not selected, ignored for the file, or not
          applicable (TU301 for a project whose target Python is below 3.15).

        Suppression syntax: codes are case-insensitive, separated by commas and/or spaces, and free
        text may follow them (`# noqa: TU101 legacy path`). A finding is silenced by the comment on
        its first line, also when it spans several lines; where that line cannot end with a comment
        (it ends inside a multi-line string or with a backslash), by the comment at the end of the
        line where the string or continuation ends. `# torchup: noqa` alone on its line silences
        every finding in the file. TU000 and TU001 (unreadable or unparsable files) cannot be
        silenced.
        """,
        why="""
        A suppression outlives the code it was written for: once the call is migrated (by hand, or
        with `torchup fix`), a stale `# noqa: TU103` would silence the next real finding on that
        line. Off by default, like ruff's RUF100: turn it on with `--extend-select TU002` (or
        `extend-select = ["TU002"]` in `[tool.torchup]`), typically in CI after adopting torchup
        with `--add-noqa`.
        """,
        fix="""
        Removes the unused codes and keeps the others (`# noqa: E501, TU101` becomes
        `# noqa: E501`). When no code is left the directive goes: the comment and the spaces before
        it, or the whole line for a comment alone on its line; free text after the codes stays as a
        plain comment (`# noqa: TU101 legacy path` becomes `# legacy path`), and so does text before
        the directive in the same comment.
        """,
        fix_safety="Safe: a code that silenced nothing changes nothing when removed.",
    )
    examples = (
        Example(
            "a code that is not a torchup rule",
            """
            import torch
            Q, R = torch.linalg.qr(A)  # noqa: TU999
            """,
            fixed="""
            import torch
            Q, R = torch.linalg.qr(A)
            """,
            executable=False,
        ),
        Example(
            "other tools' codes stay",
            """
            import os, torch  # noqa: E401, TU999, F401
            """,
            fixed="""
            import os, torch  # noqa: E401, F401
            """,
            executable=False,
        ),
        Example(
            "the code of a rule that did not run (here TU103 is not selected; with it, this is reported)",
            """
            import torch
            Q, R = torch.linalg.qr(A)  # noqa: TU103
            """,
            findings=0,
            executable=False,
        ),
        Example(
            "a bare noqa is not reported",
            """
            import os, torch  # noqa
            """,
            findings=0,
            executable=False,
        ),
    )


RULE = UnusedNoqa()
