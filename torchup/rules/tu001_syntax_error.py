"""TU001: a file that cannot be decoded or parsed."""

from torchup.analysis.rule import Example, FixAvailability, Rule, RuleDocs


class SyntaxErrorRule(Rule):
    code = "TU001"
    name = "invalid-syntax"
    summary = "A file could not be decoded or parsed as Python 3, so it was not checked."
    since = None
    fix_availability = FixAvailability.NONE
    engine_emitted = True
    docs = RuleDocs(
        what="Reports a file that is not valid Python 3 source for the interpreter running torchup: "
        "a syntax error (with the parser's message and position), bytes that are not valid in the "
        "file's declared encoding, a NUL byte (a binary file), or code nested too deeply to parse.",
        why="torchup reads code with Python's own parser; a file it cannot parse cannot be checked, "
        "and would not import either. Python 2 code lands here.",
        fix="Make the file parse (for Python 2 code, port it first), then run torchup again. Only "
        "files that mention a name some selected rule looks for, in code rather than in a comment or "
        "a docstring, are parsed (the pre-filter), and in them not the function and class bodies that "
        "mention none (they are blanked out first); "
        "`--no-prefilter` parses every file whole and so reports every syntax error.",
        fix_safety="There is no automatic fix.",
    )
    examples = (
        Example(
            "Python 2 code",
            """
            import torch
            print "cholesky", torch.cholesky(A)
            """,
            executable=False,
        ),
    )


RULE = SyntaxErrorRule()
