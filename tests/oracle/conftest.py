"""Options of the oracle tests: the generative differential's budget and seed."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("oracle", "official-agent oracle")
    group.addoption(
        "--generative-budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help="run generated scenarios through the official agent and the twin for this "
        "many seconds (default: a bounded CI share, when node and the oracle's "
        "dependencies are installed)",
    )
    group.addoption(
        "--generative-seed",
        type=int,
        default=None,
        metavar="SEED",
        help="the rotating seed of the generative run (default: printed, from the clock)",
    )
