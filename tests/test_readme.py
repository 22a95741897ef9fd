"""The README's runnable examples run as written; its "What is inside" matches the folders."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCKS = [
    block
    for block in re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    if "anyio.run(main)" in block
]


def test_the_readme_has_a_runnable_example() -> None:
    assert BLOCKS


@pytest.mark.parametrize("block", BLOCKS, ids=[f"example-{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(block: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(block, encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-W", "error", str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    assert "'type': 'finish'" in completed.stdout


def _inside() -> str:
    """The "What is inside" section of the README."""
    text = README.read_text(encoding="utf-8")
    match = re.search(r"^## What is inside\n(.*?)^## ", text, re.S | re.M)
    assert match, "README.md has no '## What is inside' section"
    return match.group(1)


def _setuptools() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        table = tomllib.load(file)["tool"]["setuptools"]
    assert isinstance(table, dict)
    return table


def _packages() -> list[str]:
    """The Python packages setuptools ships (not the data-only folders it is told are
    packages so that it ships their files)."""
    packages = _setuptools()["packages"]
    assert isinstance(packages, list)
    return [
        str(name) for name in packages if (ROOT / _folder_of(str(name)) / "__init__.py").exists()
    ]


def _folder_of(package: str) -> str:
    """The repository folder of ``package`` through ``package-dir`` (nearest mapped parent)."""
    mapping = _setuptools()["package-dir"]
    assert isinstance(mapping, dict)
    parts = package.split(".")
    for cut in range(len(parts), 0, -1):
        mapped = mapping.get(".".join(parts[:cut]))
        if mapped is not None:
            return "/".join([str(mapped), *parts[cut:]])
    raise AssertionError(f"{package} has no package-dir entry")


def _holds_no_modules(package: str) -> bool:
    folder = ROOT / _folder_of(package)
    return all(path.name == "__init__.py" for path in folder.glob("*.py"))


def test_the_inside_table_has_a_row_per_public_package() -> None:
    rows = re.findall(r"^\| `(harness_testkit[\w.]*)` \|", _inside(), re.M)
    public = [name for name in _packages() if not any(p.startswith("_") for p in name.split("."))]
    assert len(rows) == len(set(rows)), f"a package has two rows: {rows}"
    assert set(rows) <= set(public), (
        f"rows for packages that do not exist: {set(rows) - set(public)}"
    )
    # A package with no modules of its own (``harness_testkit.adapters``) is covered by the
    # rows of its sub-packages.
    missing = [
        p
        for p in public
        if p not in rows and not (_holds_no_modules(p) and any(r.startswith(p + ".") for r in rows))
    ]
    assert not missing, f"packages without a row in 'What is inside': {missing}"


def test_the_inside_section_names_every_sub_package_folder() -> None:
    inside = _inside()
    private = [name for name in _packages() if any(p.startswith("_") for p in name.split("."))]
    missing = [name for name in private if f"`{_folder_of(name)}/`" not in inside]
    assert not missing, f"sub-package folders not named in 'What is inside': {missing}"


def test_every_path_the_inside_section_names_exists() -> None:
    paths = [
        token
        for token in re.findall(r"`([^`\s]+)`", _inside())
        if "/" in token and re.fullmatch(r"[\w.\-/*]+", token)
    ]
    assert paths
    missing = [p for p in paths if not any(ROOT.glob(p.rstrip("/")))]
    assert not missing, f"paths named in 'What is inside' that do not exist: {missing}"


def test_every_top_level_folder_is_named_in_the_inside_section() -> None:
    generated = {"build", "dist", "harness-testkit-out", "node_modules", "__pycache__"}
    folders = [
        path.name
        for path in sorted(ROOT.iterdir())
        if path.is_dir()
        and (path.name == ".ci" or not path.name.startswith("."))
        and path.name not in generated
        and not path.name.endswith(".egg-info")
    ]
    inside = _inside()
    missing = [name for name in folders if f"`{name}/`" not in inside]
    assert not missing, f"top-level folders not named in 'What is inside': {missing}"
