import os

import pytest

from torchup.run import replay
from torchup.settings import torch_requirement

# tests/projects/ holds whole projects with test suites of their own, run under real torch by
# tests/test_project_suites.py; collected here they would run under this interpreter's torch, if any.
collect_ignore = ["projects"]

# Soft in production, loud in tests: internal errors show their traceback.
os.environ.setdefault("TORCHUP_DEBUG", "1")


@pytest.fixture(autouse=True)
def _no_replays_in_process(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs inside the test process neither replay a saved run nor save one (tests/test_replay.py
    tests that): a test that patches the engine must never get the report of a run another test
    made over the same files. Subprocesses, as a user runs torchup, keep the replay."""
    if request.module.__name__.rpartition(".")[2] == "test_replay":
        return
    monkeypatch.setattr(replay, "replayed", lambda invocation: None)
    monkeypatch.setattr(replay, "SETTLE_SECONDS", 1e9)  # every status counts as fresh: nothing is saved


@pytest.fixture(autouse=True)
def _no_installed_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no project names torch, the from-version is the torch installed where torchup runs:
    runs inside the test process neither read this interpreter's packages nor depend on them
    (tests/test_from_version.py tests that look-up on a made-up ``sys.path``)."""
    monkeypatch.setattr(torch_requirement, "installed_torch", lambda listed=None, read=None: (None, None))
