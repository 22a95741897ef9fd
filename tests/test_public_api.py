"""Each package has one facade with an explicit, sorted ``__all__`` of real objects."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import harness_testkit

PACKAGES = [
    "harness_testkit.spec",
    "harness_testkit.scripting",
    "harness_testkit.common",
    "harness_testkit.reference",
    "harness_testkit.fake_harness",
    "harness_testkit.conformance",
    "harness_testkit.sandbox",
    "harness_testkit.simulate",
    "harness_testkit.model_endpoint",
]


@pytest.mark.parametrize("package", PACKAGES)
def test_facade_exports_exactly_its_all(package: str) -> None:
    module = importlib.import_module(package)
    exported = module.__all__
    # The order itself is enforced by ruff (RUF022); here: no duplicates, all real.
    assert len(exported) == len(set(exported))
    for name in exported:
        assert getattr(module, name, None) is not None, f"{package}.{name} is missing"
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not getattr(value, "__name__", "").startswith(package)
    }
    assert public <= set(exported) | {"annotations"}, f"unlisted public names in {package}"


@pytest.mark.parametrize("package", PACKAGES)
def test_implementation_modules_are_private(package: str) -> None:
    module = importlib.import_module(package)
    for info in pkgutil.iter_modules(module.__path__):
        assert info.name.startswith("_"), f"{package}.{info.name} should be a private module"


def test_top_level_package_exposes_only_the_version() -> None:
    assert harness_testkit.__all__ == ["__version__"]
    assert harness_testkit.__version__


def test_pinned_reference_names_still_import_after_the_re_layout() -> None:
    """Sandbox and simulation names moved to their own packages stay importable here."""
    reference = importlib.import_module("harness_testkit.reference")
    sandbox = importlib.import_module("harness_testkit.sandbox")
    simulate = importlib.import_module("harness_testkit.simulate")
    for name in ("LocalSandboxProvider", "DockerSandboxProvider", "extract_lines"):
        assert getattr(reference, name) is getattr(sandbox, name)
    for name in simulate.__all__:
        assert getattr(reference, name) is getattr(simulate, name), name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = reference.nope
