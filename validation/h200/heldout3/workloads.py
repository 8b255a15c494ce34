"""Third set of held-out H200 workloads (docs/validation.md, "Held-out
workloads, third set"): written on 2026-12-04 after the SDPA classification
fix and captured once, to check the model on models no rule had seen.
GPU-bound shapes on purpose: their traces are small (the repository is near the
device tool's 64 MiB) and their time does not rest on the profiler's host
stretch. Passed to
``traces/capture/capture.py`` as ``FILE.py:FUNC``; random weights and
inputs; torchvision and Hugging Face models from their constructors and
configs (no download). Helpers from ``../heldout/workloads.py``.

| builder | what |
| --- | --- |
| convnext_train | ConvNeXt-T (torchvision: depthwise 7x7, LayerNorm, GELU), batch 64 x 224, bf16 autocast, channels-last, fused AdamW |
| efficientnet_train | EfficientNet-B0 (torchvision: depthwise, squeeze-excite, SiLU, batch norm), batch 256 x 224, bf16 autocast, channels-last, SGD |
| vgg16_train | VGG-16 (torchvision: large 3x3 convolutions, no norm), batch 64 x 224, bf16 autocast, channels-last, fused AdamW (`sgd=1`: SGD, which diverges) |
| resnet152_infer | ResNet-152 (torchvision), inference, batch 256 x 224, bf16 weights, channels-last |
| neox_train | GPT-NeoX 12 x d768 (transformers GPTNeoXForCausalLM: partial rotary, parallel residual), batch 16 x 512, bf16 autocast, fused AdamW |
| bert_large_infer_fp16 | BERT-large encoder (transformers BertModel), inference, fp16 weights (`bf16=1`: bf16), batch 32 x 512 |
| mobilenetv2_train | MobileNetV2 (torchvision: depthwise 3x3, batch norm, ReLU6), batch 128 x 224, bf16 autocast, channels-last, SGD (run4.sh) |
| shufflenet_train | ShuffleNetV2 x1.0 (torchvision: depthwise 3x3, channel shuffle, batch norm), batch 256 x 224, bf16 autocast, channels-last, SGD (run4.sh) |
"""
import importlib.util
import os

import torch
import torch.nn.functional as F

_spec = importlib.util.spec_from_file_location(
    "_heldout1", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "heldout", "workloads.py"))
_h1 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_h1)
_opts, _n_params, _train_step = _h1._opts, _h1._n_params, _h1._train_step


def _meta(model, o, what, dtype="fp32 params, bf16 autocast", optimizer="AdamW (fused)"):
    return {"model": what, "n_params": _n_params(model), **o, "dtype": dtype, "optimizer": optimizer}


def _vision_train(device, ctor, o, what, sgd):
    model = ctor(weights=None).to(device).to(memory_format=torch.channels_last)
    x = torch.randn(o["batch"], 3, o["image"], o["image"], device=device).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (o["batch"],), device=device)
    if sgd:
        opt, opt_name = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9), "SGD(momentum 0.9)"
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.type == "cuda")
        opt_name = "AdamW (fused)"
    step = _train_step(model, opt, lambda: F.cross_entropy(model(x), y), device)
    return {"step": step, "meta": _meta(model, o, what, optimizer=opt_name)}


def convnext_train(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 64, "image": 224})
    return _vision_train(device, torchvision.models.convnext_tiny, o, "ConvNeXt-T (torchvision), channels-last",
                         sgd=False)


def efficientnet_train(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 256, "image": 224})
    return _vision_train(device, torchvision.models.efficientnet_b0, o,
                         "EfficientNet-B0 (torchvision), channels-last", sgd=True)


def vgg16_train(device, **kw):
    # sgd=1 is the first capture's optimizer (SGD, lr 0.05, momentum 0.9): without
    # normalisation the run diverges (loss_check.py), and a diverged step's
    # tensor cores draw far less power than random data's. The default is AdamW.
    import torchvision
    o = _opts(kw, {"batch": 64, "image": 224, "sgd": False})
    return _vision_train(device, torchvision.models.vgg16, o, "VGG-16 (torchvision), channels-last",
                         sgd=o["sgd"])


def resnet152_infer(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 256, "image": 224})
    model = torchvision.models.resnet152(weights=None).eval().to(device, torch.bfloat16)
    model = model.to(memory_format=torch.channels_last)
    x = torch.randn(o["batch"], 3, o["image"], o["image"], device=device, dtype=torch.bfloat16)
    x = x.to(memory_format=torch.channels_last)

    def step():
        with torch.inference_mode():
            model(x)
    return {"step": step, "meta": _meta(model, o, "ResNet-152 (torchvision) inference, channels-last",
                                        dtype="bf16 weights", optimizer="none")}


def neox_train(device, **kw):
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM
    o = _opts(kw, {"batch": 16, "seq": 512})
    torch.manual_seed(0)
    cfg = GPTNeoXConfig(vocab_size=50304, hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
                        num_attention_heads=12, rotary_pct=0.25, max_position_embeddings=2048,
                        use_parallel_residual=True)
    model = GPTNeoXForCausalLM(cfg).to(device)
    ids = torch.randint(0, cfg.vocab_size, (o["batch"], o["seq"]), device=device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.type == "cuda")
    step = _train_step(model, opt, lambda: model(input_ids=ids, labels=ids).loss, device)
    return {"step": step, "meta": _meta(model, o, "GPT-NeoX 12 x d768 (transformers GPTNeoXForCausalLM)")}


def bert_large_infer_fp16(device, **kw):
    from transformers import BertConfig, BertModel
    o = _opts(kw, {"batch": 32, "seq": 512, "bf16": False})
    torch.manual_seed(0)
    cfg = BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
    dtype = torch.bfloat16 if o["bf16"] else torch.float16
    model = BertModel(cfg).eval().to(device, dtype)
    ids = torch.randint(0, cfg.vocab_size, (o["batch"], o["seq"]), device=device)

    def step():
        with torch.inference_mode():
            model(input_ids=ids)
    return {"step": step, "meta": _meta(model, o, "BERT-large encoder (transformers BertModel) inference",
                                        dtype=f"{str(dtype)[6:]} weights", optimizer="none")}



def mobilenetv2_train(device, **kw):
    # Captured in run4.sh, after the depthwise-convolution rule's data were in
    # and before the rule was chosen: its held-out check.
    import torchvision
    o = _opts(kw, {"batch": 128, "image": 224})
    return _vision_train(device, torchvision.models.mobilenet_v2, o,
                         "MobileNetV2 (torchvision), channels-last", sgd=True)


def shufflenet_train(device, **kw):
    # As mobilenetv2_train: depthwise 3x3 convolutions, channel shuffles, batch norm.
    import torchvision
    o = _opts(kw, {"batch": 256, "image": 224})
    return _vision_train(device, torchvision.models.shufflenet_v2_x1_0, o,
                         "ShuffleNetV2 x1.0 (torchvision), channels-last", sgd=True)
