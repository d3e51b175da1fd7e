"""The one place where an unexpected exception becomes a message and an exit code.

Users never see a traceback; ``--verbose`` or ``TORCHUP_DEBUG=1`` (set by the tests) shows it.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # (not typing's: see torchup.cli.main)
if TYPE_CHECKING:
    from collections.abc import Callable

EXIT_CLEAN, EXIT_ERROR, EXIT_INTERRUPTED = 0, 2, 130


def guarded(run: Callable[[], int], program: str, verbose: bool = False) -> int:
    try:
        return run()
    except KeyboardInterrupt:
        sys.stderr.write(f"{program}: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as exc:
        if verbose or os.environ.get("TORCHUP_DEBUG"):
            import traceback  # (here: start-up does not pay for it)

            traceback.print_exc()
        sys.stderr.write(
            f"{program}: internal error: {type(exc).__name__}: {exc}\n"
            "  This is a bug in torchup; rerun with --verbose (or TORCHUP_DEBUG=1) and report the output.\n"
        )
        return EXIT_ERROR
