"""The package facade and the protocols the fake implements."""

from __future__ import annotations

import harness_testkit.fake_harness as facade
from harness_testkit.fake_harness import FakeHarness, ScriptableHarness, is_scriptable
from harness_testkit.spec import HarnessAdapter


def test_all_is_sorted_and_complete() -> None:
    assert facade.__all__ == sorted(facade.__all__)
    public = {name for name in vars(facade) if not name.startswith("_")}
    assert set(facade.__all__) == public
    for name in facade.__all__:
        assert getattr(facade, name) is not None


def test_fake_harness_is_an_adapter_and_scriptable() -> None:
    harness = FakeHarness()
    assert isinstance(harness, HarnessAdapter)
    assert isinstance(harness, ScriptableHarness)
    assert is_scriptable(harness)
    assert not is_scriptable(object())
    assert harness.lifecycle_state_schema is not None


def test_importing_the_facade_does_not_import_hypothesis_eagerly() -> None:
    import subprocess
    import sys

    code = "import sys, harness_testkit.fake_harness; print('hypothesis' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
