"""The one registry lists every check each area module defines, once, in report order."""

from __future__ import annotations

from types import ModuleType

import pytest

from harness_testkit.conformance import REGISTRY, Check, ordered_checks
from harness_testkit.conformance._adapter import _registry as registry


@pytest.mark.parametrize("module", registry._MODULES, ids=lambda module: module.__name__)
def test_every_check_a_module_defines_is_in_its_list(module: ModuleType) -> None:
    defined = [value for value in vars(module).values() if isinstance(value, Check)]
    listed = list(module.CHECKS)
    assert sorted(item.id for item in defined) == sorted(item.id for item in listed)


def test_the_registry_is_the_concatenation_of_the_module_lists() -> None:
    expected = [item.id for module in registry._MODULES for item in module.CHECKS]
    assert list(REGISTRY) == expected
    assert {item.id for item in ordered_checks()} == set(expected)


def test_unknown_check_ids_are_named() -> None:
    with pytest.raises(KeyError, match="no-such-check"):
        ordered_checks(["no-such-check"])
