"""TU706: torchvision's `pretrained=` / `pretrained_backbone=` -> `weights=` / `weights_backbone=` (TOR201)."""

from __future__ import annotations

import ast
import json
from functools import cache
from typing import Any

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.data import data_text
from torchup.core.diagnostics import Applicability, Edit, Fix, Severity


@cache
def torchvision_facts() -> dict[str, Any]:
    """torchup/data/torchvision.json (tools/torchvision_facts.py)."""
    text = data_text("torchvision.json")
    return dict(json.loads(text))


def builders() -> dict[str, dict[str, Any]]:
    """Each model builder's facts, by its public path and by its defining module's path."""
    found = {}
    for path, fact in torchvision_facts()["builders"].items():
        found[path] = fact
        found[f"{fact['module']}.{path.rpartition('.')[2]}"] = fact
    return found


BUILDERS = builders()


class TorchvisionPretrained(Rule):
    change = Change.WARNS
    code = "TU706"
    name = "torchvision-pretrained"
    summary = "torchvision's `pretrained=True` is deprecated (since 0.13): pass `weights=` with the weights it meant."
    since = None  # (torchvision 0.13, beside torch 1.12: older than any release torchup starts from)
    severity = Severity.WARNING
    fix_availability = FixAvailability.SOMETIMES
    looks_for = LooksFor(names=tuple(sorted(BUILDERS)))
    docs = RuleDocs(
        what="""
        Finds calls of torchvision's model builders (`torchvision.models.resnet50`, the detection,
        segmentation, video, optical-flow and quantization builders: 123, any import form) that pass
        the legacy `pretrained=` or `pretrained_backbone=`, or a positional `True`/`False` where
        `weights` now stands first. TorchFix's TOR201.
        """,
        why="""
        Since torchvision 0.13 the builders take `weights=` (an enum member naming the checkpoint)
        and `weights_backbone=`; the old keywords still work through a wrapper that warns
        (UserWarning: "The parameter 'pretrained' is deprecated since 0.13 and may be removed in the
        future, please use 'weights' instead.") and maps `True` to one set of weights per builder.
        """,
        fix="""
        `pretrained=True` becomes `weights=` that builder's weights (`ResNet50_Weights.IMAGENET1K_V1`
        for `resnet50`), imported where the file lacks it; `pretrained=False` becomes `weights=None`;
        the same for `pretrained_backbone=` and `weights_backbone=`. A value other than a literal,
        and builders whose weights depend on other arguments (the quantized ones, `quantize=True`),
        are reported without a fix.
        """,
        fix_safety="""
        Safe: the weights are those the wrapper itself passes for `True`, read from the decorators
        of every builder in the wheels of torchvision 0.28.0, 0.29.1 and 0.29.2 and confirmed by
        running 0.29.1 (tools/torchvision_facts.py: each builder called with `pretrained=True`, the
        builder behind the wrapper replaced by one that records what it gets; no model built, no
        download). So the same checkpoint is loaded, without the warning.
        """,
        wheels_vs_notes="""
        TorchFix hard-coded its table of weights; this one is regenerated from the wheels. No
        torchvision release pairs with torch 2.15 on the index yet (0.29.2 is the newest).
        """,
    )
    examples = (
        Example(
            "pretrained=True",
            """
            import torchvision

            model = torchvision.models.resnet50(pretrained=True)
            """,
            fixed="""
            import torchvision
            from torchvision.models import ResNet50_Weights

            model = torchvision.models.resnet50(weights=ResNet50_Weights.IMAGENET1K_V1)
            """,
            executable=False,
        ),
        Example(
            "a detection model and its backbone, imported by name",
            """
            from torchvision.models.detection import ssdlite320_mobilenet_v3_large

            model = ssdlite320_mobilenet_v3_large(
                pretrained=False,
                pretrained_backbone=True,
            )
            """,
            findings=2,
            fixed="""
            from torchvision.models.detection import ssdlite320_mobilenet_v3_large
            from torchvision.models import MobileNet_V3_Large_Weights

            model = ssdlite320_mobilenet_v3_large(
                weights=None,
                weights_backbone=MobileNet_V3_Large_Weights.IMAGENET1K_V1,
            )
            """,
            executable=False,
        ),
        Example(
            "a positional True, and a value only known at run time",
            """
            import torchvision.models as models

            a = models.vgg16(True)
            b = models.vgg16(pretrained=use_pretrained)
            """,
            findings=2,
            fixed="""
            import torchvision.models as models
            from torchvision.models import VGG16_Weights

            a = models.vgg16(weights=VGG16_Weights.IMAGENET1K_V1)
            b = models.vgg16(pretrained=use_pretrained)
            """,
            executable=False,
        ),
        Example(
            "already on weights=, and a function of the same name elsewhere",
            """
            import torchvision
            from torchvision.models import ResNet50_Weights
            from mylib import resnet50

            a = torchvision.models.resnet50(weights=ResNet50_Weights.DEFAULT)
            b = resnet50(pretrained=True)
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        for call, qualname in ctx.calls_to(frozenset(BUILDERS)):
            fact = BUILDERS[qualname]
            legacy: dict[str, dict[str, Any]] = fact["legacy"]
            for keyword in call.keywords:
                if keyword.arg in legacy:
                    self._report(ctx, call, keyword, keyword.value, keyword.arg, legacy[keyword.arg], qualname)
            first = fact["parameters"][0] if fact["parameters"] else None
            positional = next((old for old, new in legacy.items() if new["parameter"] == first), None)
            if call.args and positional is not None:
                value = call.args[0]
                if isinstance(value, ast.Constant) and isinstance(value.value, bool):
                    self._report(ctx, call, value, value, positional, legacy[positional], qualname)

    def _report(
        self, ctx: Context, call: ast.Call, at: ast.AST, value: ast.expr, old: str, new: dict[str, Any], builder: str
    ) -> None:
        parameter = new["parameter"]
        fix = None
        if any(keyword.arg == parameter for keyword in call.keywords):
            pass  # (`pretrained=True, weights=None`: which one the author meant is theirs to say; no fix)
        elif isinstance(value, ast.Constant) and value.value is False:
            edit = _argument_edit(ctx, call, at, f"{parameter}=None")
            fix = Fix(f"pass `{parameter}=None`", Applicability.SAFE, (edit,))
        elif isinstance(value, ast.Constant) and value.value is True and new["weights"] is not None:
            enum, _, member = new["weights"].rpartition(".")
            reference = ctx.symbol_reference(enum, call)
            if reference is not None:
                text, imports = reference
                fix = Fix(f"pass `{parameter}={text}.{member}`", Applicability.SAFE,
                          (_argument_edit(ctx, call, at, f"{parameter}={text}.{member}"),), imports)
        short = builder.rpartition(".")[2]
        spelled = f"`{old}=`" if isinstance(at, ast.keyword) else f"a positional `{ast.unparse(value)}` (`{old}`)"
        help_text = f"pass `{parameter}=`: `{new['weights']}` is what `{old}=True` loads" if new["weights"] else (
            f"pass `{parameter}=` with the weights you want: for `{short}` they depend on its other arguments"
        )
        ctx.report(at, f"{spelled} of `{short}` is deprecated since torchvision 0.13 (UserWarning); use `{parameter}=`",
                   fix=fix, help=help_text)


def _argument_edit(ctx: Context, call: ast.Call, at: ast.AST, content: str) -> Edit:
    """``at`` (a keyword, or a positional argument that becomes one) replaced by ``content``. A
    positional one's edit reaches the call's end, so that the call, whose arguments move from
    `args` to `keywords`, is the node the fix is checked by (torchup.fix.safety)."""
    edit = Edits(ctx.source).replace_argument(call, at, content)
    if isinstance(at, ast.keyword):
        return edit
    _, end = ctx.source.node_range(call)
    text = ctx.source.text
    return Edit(edit.start, end, content + text[edit.end:end])


RULE = TorchvisionPretrained()
