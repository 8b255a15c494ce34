"""One operator at a time (docs/validation.md, "Operators in isolation"):
the kernel families that carry the CNN captures' power misses, each run
alone in a loop so that its measured power is that family's and nothing
else's. Shapes are the networks' (ShuffleNetV2 b256, VGG-16 b64), bf16,
channels-last where the networks are. Passed to
``traces/capture/capture.py`` as ``FILE.py:op --arg name=NAME``.

| name | what one repetition runs |
| --- | --- |
| copy | ``y.copy_(x)``, both contiguous (the control: a copy the calibration rows price) |
| to_nhwc | NCHW-contiguous x to channels-last (ShuffleNetV2's layout copies) |
| to_nchw | channels-last x to NCHW-contiguous |
| shuffle | ShuffleNetV2's channel shuffle: ``x.view(b, 2, c/2, h, w).transpose(1, 2).contiguous()`` |
| cat | ``torch.cat`` of an NCHW and a channels-last half along channels (ShuffleNetV2) |
| cat_aligned | ``torch.cat`` of two NCHW-contiguous halves (the control of ``cat``) |
| maxpool | 3x3 / 2 max pooling, forward and backward (ShuffleNetV2's stem; atomic scatter backward) |
| dwconv | depthwise 3x3 convolution, forward and backward (data and weight gradients) |
| dwconv5 | depthwise 5x5 (EfficientNet's), 240 channels at 28x28, batch 128 |
| dwconv7 | depthwise 7x7 (ConvNeXt-T's first stage), 96 channels at 56x56, batch 64 |
| conv1x1 | 1x1 convolution, forward and backward |
| bn | batch norm in training mode, forward and backward |
| vggconv | VGG-16's 3x3 convolution 256 -> 256 at 56x56, forward and backward, random input and gradient |
| vggconv_relu | the same with a ReLU'd input and a gradient zeroed where that ReLU was (a plain ReLU network's operands) |
| add | ``z = x + y``, bf16, VGG-16's first-block activation size |

Prepared 2026-12-05 for the next device call (``run4.sh``; not yet run): the
L2 rule of layout-changing copies (docs/design.md) off its fit, and the
7x7 depthwise pricing at another size.

| name | what one repetition runs |
| --- | --- |
| add_mixed | ``y.add_(x)``: y channels-last, x NCHW (EfficientNet's gradient accumulation; the rule is not applied to it) |
| to_nhwc_fp32, to_nchw_fp32 | ``to_nhwc`` / ``to_nchw`` on float32 (the rule's sector arithmetic at 4-byte elements) |
| transpose | ``x.transpose(1, 2).contiguous()`` of 64 x 1024 x 1024 bf16 (a matrix transpose, no channels) |
| to_nhwc_c8 | NCHW to channels-last with 8 channels, 256 x 8 x 112 x 112 (a 16-byte inner run on the written side) |
| dwconv7_s3 | depthwise 7x7, 384 channels at 14x14, batch 64 (ConvNeXt-T's third stage) |

Prepared 2026-12-05 for the call of ``call5/run5.sh``, after cuDNN's layout
transforms and SIMT implicit convolutions had rules (fitted on R3D-18 alone):
the NCHW operators ResNet-18 in NCHW spends its step on, one by one, to
split its miss between them. ResNet-18's layer-1 shapes at batch 128, bf16,
NCHW-contiguous.

| name | what one repetition runs |
| --- | --- |
| conv_nchw | 3x3 convolution 64 -> 64 at 56x56, batch 128, NCHW, forward and backward (cuDNN transforms both ways around its kernels) |
| conv_stem_nchw | ResNet's 7x7 / 2 stem, 3 -> 64 channels at 224x224, batch 128, NCHW, forward and backward (the three-channel transform) |
| bn_nchw | batch norm in training mode on 128 x 64 x 56 x 56, NCHW, forward and backward (ATen's NCHW kernels) |
| conv3d | 3x3x3 convolution 64 -> 64 on 8 x 64 x 8 x 28 x 28, NCDHW, forward and backward (R3D-18's layer-2 kernels) |

Prepared 2026-12-05 (evening) for ``run7.sh``: two families whose SMs stay
resident while moving little data, each at several intensities, so that
their power is measured as a function of what the trace shows (grid, bytes
per second) rather than at one shape.

| name | options | what one repetition runs |
| --- | --- | --- |
| bn_nchw | ``c``, ``n``, ``hw`` (default 64, 128, 56) | ``bn_nchw`` with C channels and batch N at HW x HW: its statistics and backward-reduce kernels run one 512-thread block per channel, so C sets how many SMs they hold (and how many blocks share one) |
| bn | ``c``, ``n``, ``hw`` (default 116, 256, 28) | ``bn`` (channels-last) at other shapes |
| layer_norm | ``rows``, ``features`` (default 64, 262144) | ``nn.LayerNorm`` forward and backward on a rows x features bf16 tensor (ATen's row-per-block kernels) |
| group_norm | ``n``, ``c``, ``hw``, ``groups`` (default 8, 256, 56, 32) | ``nn.GroupNorm`` in bf16, forward and backward, NCHW |
| scatter | ``rows`` (default 200000) | ``out.index_add_(0, idx, src)``: 1M random indices into ``rows`` rows of 128 fp32 features (the GNN capture's atomic scatter); fewer rows, more collisions |
| gather | ``rows`` (default 200000) | ``src.index_select(0, idx)``: 1M random rows of a ``rows`` x 128 fp32 table (the GNN capture's gather) |

Prepared 2026-12-05 (late) for ``run10.sh``: tensor-core convolutions alone,
narrow and wide, whose warp instructions Nsight Compute counts at 29x and
2.6x the estimate in the networks (docs/validation.md, "Instructions of the
tensor-core convolutions"), so that their power is measured at known counts.

| name | options | what one repetition runs |
| --- | --- | --- |
| conv3d | ``c``, ``n``, ``hw``, ``frames`` (default 64, 8, 28, 8) | ``conv3d`` with C -> C channels on N x C x FRAMES x HW x HW |
| vggconv | ``c``, ``n``, ``hw`` (default 256, 64, 56) | ``vggconv`` with C -> C channels at HW x HW, batch N |

Prepared 2026-12-06 for ``../heldout14/run.sh``: the row-wise norms across
row widths, so that their warp instructions (Nsight Compute counts layer
norm's forward at 2.7 per element at 768-1,024 features, 0.8 at 262,144:
a per-row cost the class's per-byte rate cannot carry) are measured as a
function of the shapes a trace records.

| name | options | what one repetition runs |
| --- | --- | --- |
| layer_norm | ``dtype`` (``bf16``, ``fp32``; default ``bf16``) as well | as above, in that precision |
| rms_norm | ``rows``, ``features`` (default 8192, 2048), ``dtype`` | ``F.rms_norm`` with a weight, forward and backward |

Prepared 2026-12-06 (late) for ``../heldout19/run.sh``: the families of the
3-D U-Net (validation/h100/heldout9, h200/heldout7), whose whole step reads
8-17 points below its board's streaming control, at its own shapes (batch 1,
NCDHW, 24-192 channels at 112^3-14^3), so that the miss is split between them.

| name | options | what one repetition runs |
| --- | --- | --- |
| bn_nchw | ``frames`` (default 0: 2-D) as well | with FRAMES > 0, ``nn.BatchNorm3d`` on N x C x FRAMES x HW x HW (the same ATen NCHW kernels, one block per channel) |
| upsample3d | ``c``, ``n``, ``hw`` (default 48, 1, 56) | ``F.interpolate(scale_factor=2, mode="trilinear")`` of an N x C x HW^3 bf16 tensor, forward and backward (ATen's ``upsample_trilinear3d`` kernels; the backward adds atomically) |

Prepared 2026-12-06 (night) for ``../heldout21/run.sh``: the upsampling and
roll rules of traces/annotate.cpp held out on 2-D modes, dtypes and layouts
that set none of them.

| name | options | what one repetition runs |
| --- | --- | --- |
| upsample2d | ``c``, ``n``, ``hw`` (default 128, 16, 64), ``mode`` (nearest, bilinear, bicubic), ``cl`` (1: channels-last), ``dtype`` | ``F.interpolate(scale_factor=2, mode=...)`` of an N x C x HW x HW tensor, forward and backward (ATen's ``upsample_*2d`` kernels) |
| roll | ``n``, ``hw``, ``c`` (default 32, 64, 128), ``dtype`` | ``torch.roll(shifts=(-4, -4), dims=(1, 2))`` of an N x HW x HW x C tensor, Swin's window shift (two ``roll_cuda_kernel`` launches) |
"""
try:  # table.py reads OPS on machines without PyTorch
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover
    torch = F = None

OPS = ("copy", "to_nhwc", "to_nchw", "shuffle", "cat", "cat_aligned", "maxpool", "dwconv", "dwconv5", "dwconv7",
       "conv1x1", "bn", "vggconv", "vggconv_relu", "add",
       "add_mixed", "to_nhwc_fp32", "to_nchw_fp32", "transpose", "to_nhwc_c8", "dwconv7_s3",
       "conv_nchw", "conv_stem_nchw", "bn_nchw", "conv3d", "scatter", "gather", "layer_norm", "group_norm",
       "rms_norm", "upsample3d", "upsample2d", "roll")


def _opts(given, defaults):
    out = dict(defaults)
    for k, v in given.items():
        if k not in defaults:
            raise ValueError(f"unknown option '{k}' (known: {', '.join(sorted(defaults))})")
        out[k] = type(defaults[k])(v)
    return out


def _rand(shape, device, cl=False, grad=False, dtype=None):
    x = torch.randn(shape, device=device, dtype=dtype or torch.bfloat16)
    if cl:
        x = x.contiguous(memory_format=torch.channels_last)
    return x.requires_grad_(grad)


def _conv(device, n, c, k, hw, ksize, groups, relu, cl=True, stride=1, frames=0):
    conv = F.conv3d if frames else F.conv2d
    w = _rand((k, c // groups) + (ksize,) * (3 if frames else 2), device, cl=cl and not frames, grad=True)
    x = _rand((n, c) + ((frames,) if frames else ()) + (hw, hw), device, cl=cl and not frames)
    if relu:
        x = torch.relu(x)
    x.requires_grad_(True)
    pad = ksize // 2
    y0 = conv(x, w, padding=pad, groups=groups, stride=stride)
    g = torch.randn_like(y0)
    if relu:  # the gradient a ReLU after this convolution would pass back: zero where it cut
        g = g * (torch.randn_like(y0) > 0)

    def rep():
        y = conv(x, w, padding=pad, groups=groups, stride=stride)
        y.backward(g)
        x.grad = None
        w.grad = None
    return rep


def _bn(device, shape, cl):
    """Batch norm in training mode, forward under bf16 autocast and backward."""
    bn = (torch.nn.BatchNorm3d if len(shape) == 5 else torch.nn.BatchNorm2d)(shape[1]).to(device)
    if cl:
        bn = bn.to(memory_format=torch.channels_last)
    x = _rand(shape, device, cl=cl, grad=True)
    g = torch.randn_like(x)

    def rep():
        with torch.autocast(device.type, dtype=torch.bfloat16):
            y = bn(x)
        y.backward(g)
        x.grad = None
        bn.weight.grad = None
        bn.bias.grad = None
    return rep


def op(device, **kw):
    o = _opts(kw, {"name": "copy", "reps": 20, "c": 0, "n": 0, "hw": 0, "rows": 0, "features": 0, "groups": 32,
                   "frames": 0, "dtype": "bf16", "mode": "nearest", "cl": 0})
    if o["dtype"] not in ("bf16", "fp32"):
        raise ValueError(f"unknown dtype '{o['dtype']}' (known: bf16, fp32)")
    dt = torch.bfloat16 if o["dtype"] == "bf16" else torch.float32
    shape = lambda n, c, hw: (o["n"] or n, o["c"] or c, o["hw"] or hw, o["hw"] or hw)  # noqa: E731
    name, reps = o["name"], o["reps"]
    if name not in OPS:
        raise ValueError(f"unknown op '{name}' (known: {', '.join(OPS)})")
    sn = (256, 116, 28, 28)  # a ShuffleNetV2 stage-2 activation at batch 256
    if name == "copy":
        x, y = _rand(sn, device), _rand(sn, device)
        rep = lambda: y.copy_(x)  # noqa: E731
    elif name == "to_nhwc":
        x = _rand(sn, device)
        rep = lambda: x.contiguous(memory_format=torch.channels_last)  # noqa: E731
    elif name == "to_nchw":
        x = _rand(sn, device, cl=True)
        rep = lambda: x.contiguous()  # noqa: E731
    elif name == "shuffle":
        x = _rand(sn, device)
        b, c, h, w = sn
        rep = lambda: x.view(b, 2, c // 2, h, w).transpose(1, 2).contiguous()  # noqa: E731
    elif name == "cat":
        a, bb = _rand((256, 58, 28, 28), device), _rand((256, 58, 28, 28), device, cl=True)
        rep = lambda: torch.cat([a, bb], dim=1)  # noqa: E731
    elif name == "cat_aligned":
        a, bb = _rand((256, 58, 28, 28), device), _rand((256, 58, 28, 28), device)
        rep = lambda: torch.cat([a, bb], dim=1)  # noqa: E731
    elif name == "maxpool":
        x = _rand((256, 24, 112, 112), device, cl=True, grad=True)
        g = torch.randn_like(F.max_pool2d(x.detach(), 3, 2, 1))

        def rep():
            F.max_pool2d(x, 3, 2, 1).backward(g)
            x.grad = None
    elif name == "dwconv":
        rep = _conv(device, 256, 116, 116, 28, 3, 116, relu=False)
    elif name == "dwconv5":
        rep = _conv(device, 128, 240, 240, 28, 5, 240, relu=False)
    elif name == "dwconv7":
        rep = _conv(device, 64, 96, 96, 56, 7, 96, relu=False)
    elif name == "dwconv7_s3":
        rep = _conv(device, 64, 384, 384, 14, 7, 384, relu=False)
    elif name == "add_mixed":
        y, x = _rand(sn, device, cl=True), _rand(sn, device)
        rep = lambda: y.add_(x)  # noqa: E731
    elif name in ("to_nhwc_fp32", "to_nchw_fp32"):
        x = _rand(sn, device, cl=name == "to_nchw_fp32", dtype=torch.float32)
        if name == "to_nhwc_fp32":
            rep = lambda: x.contiguous(memory_format=torch.channels_last)  # noqa: E731
        else:
            rep = lambda: x.contiguous()  # noqa: E731
    elif name == "transpose":
        x = _rand((64, 1024, 1024), device)
        rep = lambda: x.transpose(1, 2).contiguous()  # noqa: E731
    elif name == "to_nhwc_c8":
        x = _rand((256, 8, 112, 112), device)
        rep = lambda: x.contiguous(memory_format=torch.channels_last)  # noqa: E731
    elif name == "conv1x1":
        rep = _conv(device, 256, 116, 116, 28, 1, 1, relu=False)
    elif name in ("vggconv", "vggconv_relu"):
        c = o["c"] or 256
        rep = _conv(device, o["n"] or 64, c, c, o["hw"] or 56, 3, 1, relu=name.endswith("relu"))
    elif name == "conv_nchw":
        rep = _conv(device, 128, 64, 64, 56, 3, 1, relu=False, cl=False)
    elif name == "conv_stem_nchw":
        rep = _conv(device, 128, 3, 64, 224, 7, 1, relu=False, cl=False, stride=2)
    elif name == "conv3d":
        c = o["c"] or 64
        rep = _conv(device, o["n"] or 8, c, c, o["hw"] or 28, 3, 1, relu=False, cl=False, frames=o["frames"] or 8)
    elif name == "bn_nchw":
        rep = _bn(device, shape(128, 64, 56) + ((o["frames"],) if o["frames"] else ()), cl=False)
    elif name == "upsample3d":
        side = o["hw"] or 56
        x = _rand((o["n"] or 1, o["c"] or 48, side, side, side), device, grad=True)
        g = torch.randn((x.shape[0], x.shape[1], 2 * side, 2 * side, 2 * side), device=device, dtype=x.dtype)

        def rep():
            F.interpolate(x, scale_factor=2, mode="trilinear", align_corners=False).backward(g)
            x.grad = None
    elif name == "upsample2d":
        if o["mode"] not in ("nearest", "bilinear", "bicubic"):
            raise ValueError(f"unknown mode '{o['mode']}' (known: nearest, bilinear, bicubic)")
        x = _rand(shape(16, 128, 64), device, cl=bool(o["cl"]), grad=True, dtype=dt)
        y0 = F.interpolate(x, scale_factor=2, mode=o["mode"])
        g = torch.randn_like(y0)

        def rep():
            F.interpolate(x, scale_factor=2, mode=o["mode"]).backward(g)
            x.grad = None
    elif name == "roll":
        side = o["hw"] or 64
        x = _rand((o["n"] or 32, side, side, o["c"] or 128), device, dtype=dt)
        rep = lambda: torch.roll(x, shifts=(-4, -4), dims=(1, 2))  # noqa: E731
    elif name in ("scatter", "gather"):
        g = torch.Generator(device=device).manual_seed(0)
        rows = o["rows"] or 200000
        idx = torch.randint(0, rows, (1 << 20,), device=device, generator=g)
        if name == "scatter":
            out, src = torch.zeros(rows, 128, device=device), torch.randn(1 << 20, 128, device=device)
            rep = lambda: out.index_add_(0, idx, src)  # noqa: E731
        else:
            table = torch.randn(rows, 128, device=device)
            rep = lambda: table.index_select(0, idx)  # noqa: E731
    elif name == "bn":
        rep = _bn(device, shape(*sn[:3]), cl=True)
    elif name == "layer_norm":
        x = _rand((o["rows"] or 64, o["features"] or 262144), device, grad=True, dtype=dt)
        ln = torch.nn.LayerNorm(x.shape[1], device=device, dtype=dt)
        g = torch.randn_like(x)

        def rep():
            ln(x).backward(g)
            x.grad = ln.weight.grad = ln.bias.grad = None
    elif name == "rms_norm":
        x = _rand((o["rows"] or 8192, o["features"] or 2048), device, grad=True, dtype=dt)
        wt = torch.ones(x.shape[1], device=device, dtype=dt, requires_grad=True)
        g = torch.randn_like(x)

        def rep():
            F.rms_norm(x, (x.shape[1],), wt).backward(g)
            x.grad = wt.grad = None
    elif name == "group_norm":
        x = _rand(shape(8, 256, 56), device, grad=True)
        gn = torch.nn.GroupNorm(o["groups"], x.shape[1], device=device, dtype=torch.bfloat16)
        g = torch.randn_like(x)

        def rep():
            gn(x).backward(g)
            x.grad = gn.weight.grad = gn.bias.grad = None
    else:  # add
        x, y = _rand((64, 64, 224, 224), device), _rand((64, 64, 224, 224), device)
        rep = lambda: x + y  # noqa: E731

    def step():
        for _ in range(reps):
            rep()
    given = {k: o[k] for k in ("c", "n", "hw", "rows", "features", "groups", "frames", "dtype", "mode", "cl")
             if k in kw}
    return {"step": step, "meta": {"model": f"operator '{name}' x {reps}", "op": name, "reps": reps, **given}}
