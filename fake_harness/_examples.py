"""The example scripts shipped as package data (``examples/*.yaml``)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from harness_testkit.scripting import Script

__all__ = ["example_path", "load_example"]


def example_path(name: str = "hello") -> Path:
    """The path of example ``name`` (``examples/<name>.yaml``).

    Raises:
        FileNotFoundError: when there is no such example.
    """
    path = Path(str(resources.files("harness_testkit.fake_harness") / "examples" / f"{name}.yaml"))
    if not path.is_file():
        raise FileNotFoundError(
            f"There is no fake harness example named {name!r} (looked for {path})."
        )
    return path


def load_example(name: str = "hello") -> Script:
    """Load example ``name`` as a validated :class:`Script`."""
    return Script.from_file(example_path(name))
