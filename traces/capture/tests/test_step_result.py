"""step_result.check: is what step() returned finite? (No torch: a stand-in
with the three methods it uses.)"""
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import step_result  # noqa: E402


class FakeTensor:
    """The part of torch.Tensor that check() reads."""

    def __init__(self, values, floating=True):
        self.values, self.floating = list(values), floating

    def is_floating_point(self):
        return self.floating

    def numel(self):
        return len(self.values)

    def isfinite(self):
        return FakeBools([math.isfinite(v) for v in self.values])

    def item(self):
        assert len(self.values) == 1
        return self.values[0]


class FakeBools:
    def __init__(self, values):
        self.values = values

    def all(self):
        return all(self.values)


def test_a_finite_loss_is_reported_with_its_value():
    assert step_result.check(FakeTensor([2.5])) == {"finite": True, "value": 2.5, "elements": 1}
    assert step_result.check(0.75) == {"finite": True, "value": 0.75, "elements": 1}


def test_a_nan_or_inf_anywhere_is_not_finite_and_has_no_value():
    assert step_result.check(FakeTensor([float("nan")])) == {"finite": False, "value": None, "elements": 1}
    assert step_result.check(FakeTensor([1.0, float("inf"), 2.0])) == {"finite": False, "value": None,
                                                                        "elements": 3}
    # A tuple (loss, logits): one NaN among them is enough.
    r = step_result.check((FakeTensor([1.0]), FakeTensor([0.5, float("-inf")])))
    assert r == {"finite": False, "value": None, "elements": 3}


def test_integer_outputs_are_finite_and_nothing_is_not_checked():
    # Greedy decode returns token ids: integers, nothing to check but their count.
    assert step_result.check(FakeTensor([17, 4], floating=False)) == {"finite": True, "value": None, "elements": 2}
    assert step_result.check(None) is None
    assert step_result.check({"aux": None, "flag": True}) is None


def test_remembering_keeps_the_last_value_and_passes_it_on():
    calls = iter([1.0, float("nan"), 3.0])
    step = step_result.Remembering(lambda: next(calls))
    assert step() == 1.0 and step.last == 1.0
    assert math.isnan(step())
    assert step_result.check(step.last)["finite"] is False
    step()
    assert step_result.check(step.last) == {"finite": True, "value": 3.0, "elements": 1}
