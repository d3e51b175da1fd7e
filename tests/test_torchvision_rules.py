"""TU706-TU708 (TorchFix's TOR201-TOR203) and their data, torchup/data/torchvision.json
(tools/torchvision_facts.py: read from torchvision's wheels, confirmed by running 0.29.1)."""

from __future__ import annotations

import pytest

from helpers import check, fix
from torchup.rules.tu706_torchvision_pretrained import BUILDERS, torchvision_facts


def test_the_data_names_every_builder_and_the_weights_true_meant() -> None:
    facts = torchvision_facts()
    assert facts["confirmed_by_run"] in facts["wheels"]
    builders = facts["builders"]
    assert len(builders) >= 100
    for path, fact in builders.items():
        assert path.startswith("torchvision.models.") and fact["parameters"], path
        for old, new in fact["legacy"].items():
            assert old.startswith("pretrained") and new["parameter"] in fact["parameters"], path
            weights = new["weights"]
            assert weights is None or (weights.startswith("torchvision.models.") and "_Weights." in weights), path
    assert builders["torchvision.models.resnet50"]["legacy"]["pretrained"]["weights"] == (
        "torchvision.models.ResNet50_Weights.IMAGENET1K_V1"
    )
    assert builders["torchvision.models.quantization.resnet50"]["legacy"]["pretrained"]["weights"] is None
    assert "torchvision.models.resnet.resnet50" in BUILDERS  # (the defining module's path too)


@pytest.mark.parametrize(
    ("code", "fixed"),
    [
        (
            "from torchvision.models import resnet18\nnet = resnet18(pretrained=True)\n",
            "from torchvision.models import resnet18\nfrom torchvision.models import ResNet18_Weights\n"
            "net = resnet18(weights=ResNet18_Weights.IMAGENET1K_V1)\n",
        ),
        (
            "import torchvision.models.resnet as R\nnet = R.resnet18(pretrained=False)\n",
            "import torchvision.models.resnet as R\nnet = R.resnet18(weights=None)\n",
        ),
        (
            "import torchvision\nnet = torchvision.models.segmentation.fcn_resnet50(pretrained_backbone=False)\n",
            "import torchvision\nnet = torchvision.models.segmentation.fcn_resnet50(weights_backbone=None)\n",
        ),
    ],
)
def test_pretrained_through_any_import_form(code: str, fixed: str) -> None:
    assert [d.code for d in check(code, ["TU706"])] == ["TU706"]
    assert fix(code, select=["TU706"]) == fixed


@pytest.mark.parametrize(
    "code",
    [
        "from mylib.models import resnet18\nnet = resnet18(pretrained=True)\n",  # another library's builder
        "import timm\nnet = timm.create_model('resnet18', pretrained=True)\n",
        "import torchvision\nnet = torchvision.models.resnet18(weights=None, progress=False)\n",
        "from torchvision.models.vgg import make_layers, cfgs\nlayers = make_layers(cfgs['D'], False)\n",
    ],
)
def test_look_alikes_of_pretrained_are_not_reported(code: str) -> None:
    assert check(code, ["TU706"]) == []


def test_a_computed_default_is_reported_without_a_fix() -> None:
    code = "from torchvision.models.quantization import resnet50\nnet = resnet50(pretrained=True, quantize=True)\n"
    (finding,) = check(code, ["TU706"])
    assert finding.fix is None and "depend on its other arguments" in (finding.help or "")


def test_to_tensor_v2_only_and_singleton_imports() -> None:
    code = "import torchvision.transforms as transforms\nfrom torchvision.transforms import v2\n" \
           "a = transforms.ToTensor()\nb = v2.ToTensor()\n"
    assert [(d.line, d.code) for d in check(code, ["TU707", "TU708"])] == [(1, "TU708"), (4, "TU707")]
