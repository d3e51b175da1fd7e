"""The example notebook still runs: its code cells, in order, in one namespace (no Jupyter needed)."""

import json
from pathlib import Path
from unittest import mock

import torch

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "explore.ipynb"


def run_notebook():
    namespace = {"__name__": "__main__"}
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    for number, cell in enumerate(c for c in cells if c["cell_type"] == "code"):
        # IPython magics and shell escapes are not Python; nothing here depends on them.
        lines = [line for line in "".join(cell["source"]).splitlines() if not line.lstrip().startswith(("%", "!"))]
        exec(compile("\n".join(lines), f"{NOTEBOOK.name}[{number + 1}]", "exec"), namespace)
    return namespace


def test_notebook_runs():
    ns = run_notebook()
    assert torch.allclose(ns["L"] @ ns["L"].t(), ns["cov"])
    assert torch.allclose(ns["U"], ns["L"].t())
    assert ns["Qc"].shape == (200, 200) and ns["basis"].shape == (200, 4)
    assert torch.allclose(ns["lazy_L"] @ ns["lazy_L"].t(), ns["lazy"].evaluate())


def test_notebook_factors_through_torch_cholesky():
    # Two factorisations in the cells, one inside LazyMatrix.cholesky.
    with mock.patch("torch.cholesky", wraps=torch.cholesky) as spy:
        run_notebook()
    assert spy.call_count == 3
