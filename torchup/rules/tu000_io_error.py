"""TU000: a path that cannot be read or written."""

from torchup.analysis.rule import FixAvailability, Rule, RuleDocs


class IoError(Rule):
    code = "TU000"
    name = "io-error"
    summary = "A file or directory could not be read (or a fix could not be written)."
    since = None
    fix_availability = FixAvailability.NONE
    engine_emitted = True
    docs = RuleDocs(
        what="Reports a path that torchup was asked to check but could not read: a missing path, a "
        "permission problem, a symlink loop; and a fixed file "
        "that could not be written back (read-only file, or a file that changed on disk meanwhile).",
        why="A file torchup could not read is a file nobody checked. The run goes on with the other "
        "files; the exit code is 1, or 2 when no file at all could be read.",
        fix="Fix the path or its permissions and run torchup again.",
        fix_safety="There is no automatic fix.",
    )


RULE = IoError()
