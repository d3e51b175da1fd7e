"""TU707: torchvision's `transforms.v2.ToTensor` is deprecated (TOR202)."""

from __future__ import annotations

from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, RuleDocs
from torchup.core.diagnostics import Severity
from torchup.rules._catalogue import CatalogueRule, Entry
from torchup.rules.tu706_torchvision_pretrained import torchvision_facts

FACT = torchvision_facts()["to_tensor"]
TO_TENSOR = FACT["path"]  # torchvision.transforms.v2.ToTensor
INSTEAD = "use `v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])`"

ENTRY = Entry(
    code="TU707", name="torchvision-v2-to-tensor", since="2.0", change=Change.WARNS,
    summary="", what="", why="", fix="", fix_safety="", evidence="",
    gone={TO_TENSOR: INSTEAD, "torchvision.transforms.v2._deprecated.ToTensor": INSTEAD},
)


class TorchvisionToTensor(CatalogueRule):
    change = Change.WARNS
    code = "TU707"
    name = "torchvision-v2-to-tensor"
    summary = "torchvision's v2 `ToTensor` is deprecated: `Compose([ToImage(), ToDtype(torch.float32, scale=True)])`."
    since = None  # (a torchvision deprecation, in every torchvision that pairs with torch 2.x's later releases)
    severity = Severity.WARNING
    fix_availability = FixAvailability.NONE
    entry = ENTRY
    looks_for = LooksFor(names=tuple(sorted(ENTRY.gone)))
    docs = RuleDocs(
        what="""
        Finds `torchvision.transforms.v2.ToTensor` (any import form; the import line and each use),
        not the v1 `torchvision.transforms.ToTensor`, which is not deprecated. TorchFix's TOR202.
        """,
        why=f"""
        The v2 transform warns when made (UserWarning, {FACT["evidence"]} in torchvision 0.28.0 to
        0.29.2: "{FACT["warning"]} and will be removed in a future release"); v2 splits it in two: `ToImage()`
        (a PIL image or array to a `tv_tensors.Image`) and `ToDtype(torch.float32, scale=True)`
        (to float in [0, 1]).
        """,
        fix="""
        None automatic: `v2.ToTensor()` becomes `v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32,
        scale=True)])`, whose result is a `tv_tensors.Image` (a Tensor subclass) rather than a plain
        Tensor; check what reads it.
        """,
        fix_safety="No fix is offered.",
    )
    examples = (
        Example(
            "the deprecated v2 transform",
            """
            from torchvision.transforms import v2

            transform = v2.Compose([v2.RandomHorizontalFlip(), v2.ToTensor()])
            """,
        ),
        Example(
            "imported by name: the import line and the use",
            """
            from torchvision.transforms.v2 import ToTensor

            transform = ToTensor()
            """,
            findings=2,
        ),
        Example(
            "the v1 transform, and v2's replacement",
            """
            import torch
            from torchvision import transforms
            from torchvision.transforms import v2

            old = transforms.ToTensor()
            new = v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])
            """,
            findings=0,
        ),
    )


RULE = TorchvisionToTensor()
