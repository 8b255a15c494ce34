"""Fourth set of held-out H200 workloads (docs/validation.md, "Held-out
workloads, fourth set"): networks with depthwise or grouped convolutions,
written and captured on 2026-12-04 after the depthwise instruction rule was
set, as its held-out check on networks no rule had seen. Passed to
``traces/capture/capture.py`` as ``FILE.py:FUNC``; torchvision constructors
(no download), random weights and inputs, bf16 autocast, channels-last, SGD
(lr 0.05, momentum 0.9) as the third set's depthwise networks.

| builder | what |
| --- | --- |
| mnasnet_train | MNASNet 1.0 (depthwise 3x3 and 5x5, batch norm, ReLU), batch 128 x 224 |
| mobilenetv3_small_train | MobileNetV3-Small (depthwise 3x3 and 5x5, squeeze-excite, hardswish), batch 256 x 224 |
| regnety_train | RegNetY-800MF (grouped 3x3 convolutions of 16 channels per group, squeeze-excite: no depthwise), batch 128 x 224 |
| efficientnet_b2_train | EfficientNet-B2 (depthwise 3x3 and 5x5, squeeze-excite, SiLU), batch 96 x 260 |
"""
import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    "_heldout3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "heldout3", "workloads.py"))
_h3 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_h3)
_opts, _vision_train = _h3._opts, _h3._vision_train


def mnasnet_train(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 128, "image": 224})
    return _vision_train(device, torchvision.models.mnasnet1_0, o, "MNASNet 1.0 (torchvision), channels-last",
                         sgd=True)


def mobilenetv3_small_train(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 256, "image": 224})
    return _vision_train(device, torchvision.models.mobilenet_v3_small, o,
                         "MobileNetV3-Small (torchvision), channels-last", sgd=True)


def regnety_train(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 128, "image": 224})
    return _vision_train(device, torchvision.models.regnet_y_800mf, o,
                         "RegNetY-800MF (torchvision), channels-last", sgd=True)


def efficientnet_b2_train(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 96, "image": 260})
    return _vision_train(device, torchvision.models.efficientnet_b2, o,
                         "EfficientNet-B2 (torchvision), channels-last", sgd=True)
