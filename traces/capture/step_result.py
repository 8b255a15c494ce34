"""Is what a workload's step() returned finite?

A training run that has diverged multiplies NaNs and infinities, and such
data toggle the GPU's datapaths far less than real data: a VGG-16 that
diverged under SGD drew 470 W where dvfsim, which assumes random-like data,
predicted 700 W, and the same network training with AdamW drew 639 W
(docs/validation.md, "Held-out workloads, third set"). Nothing in a trace
shows it, so capture.py asks the workload:
when step() returns its loss (or an output), that value is checked after
the energy window and after the profiled steps, and `hw validate` says so
when it was not finite.

No torch import: a tensor is anything with `is_floating_point`, `isfinite`
and `numel` (torch.Tensor), so the tests run without PyTorch.
"""
import math

NOTE = ("what the workload's step() returned, checked after the last step of the energy window "
        "and after the last profiled step: finite (no NaN or inf anywhere in it), its value when it "
        "is one finite number, its element count; null when step() returned nothing checkable")


def _leaves(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _is_tensor(v):
    return all(hasattr(v, a) for a in ("is_floating_point", "isfinite", "numel"))


def check(value):
    """{"finite": bool, "value": float or None, "elements": int} for the
    numbers and tensors in `value` (nested lists, tuples and dicts are
    walked); None when it holds none (a step() that returns nothing). A
    tensor is synchronised on to read it: call this between steps, never
    inside a timed window."""
    finite, elements, single = True, 0, None
    for leaf in _leaves(value):
        if isinstance(leaf, bool) or leaf is None:
            continue
        if isinstance(leaf, (int, float)):
            x = float(leaf)
            finite = finite and math.isfinite(x)
            elements += 1
            single = x
        elif _is_tensor(leaf):
            n = int(leaf.numel())
            elements += n
            if leaf.is_floating_point() and n > 0:
                finite = finite and bool(leaf.isfinite().all())
            if n == 1:
                single = float(leaf.item() if hasattr(leaf, "item") else leaf)
    if elements == 0:
        return None
    one = single if elements == 1 and single is not None and math.isfinite(single) else None
    return {"finite": finite, "value": one, "elements": elements}


class Remembering:
    """step() wrapped so that the value of its last call is kept (`last`)."""

    def __init__(self, step):
        self.step = step
        self.last = None

    def __call__(self):
        self.last = self.step()
        return self.last
