"""The README and the docs: every code block runs, validates or says why it cannot; the
README's set-up commands are the ones CI runs; its "What is inside" matches the folders;
the site builds in strict mode.

A fenced block is marked by an HTML comment on the line before its fence:

- ``<!-- not-run: REASON -->``: shown only (REASON says why it cannot run here);
- ``<!-- validates: KIND -->``: a YAML or JSON document loaded as KIND (:data:`LOADERS`);
- ``<!-- run-in: repo -->``: a shell block run from the repository root (it names
  repository files); other shell blocks run in an empty temporary directory.

Unmarked ``python`` blocks run as scripts and unmarked ``bash`` blocks as
``bash -euo pipefail``; every other block needs a marker.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
#: The README's line budget (issue 40: one screen).
README_MAX_LINES = 150
_FENCE = re.compile(
    r"^(?P<indent> *)```(?P<lang>[\w-]*)\n(?P<body>.*?)^(?P=indent)```$", re.S | re.M
)
_MARK = re.compile(r"^<!-- (?P<kind>not-run|validates|run-in): (?P<value>.+?) -->$")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str
    line: int
    lang: str
    body: str
    mark: str | None
    value: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def _pages() -> list[Path]:
    # docs/findings holds the pi findings' replay bundles, no pages.
    return [README, *sorted(p for p in DOCS.rglob("*.md") if "findings" not in p.parts)]


def _blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    blocks = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        mark = _MARK.match(before)
        indent = len(match.group("indent"))
        body = "\n".join(line[indent:] for line in match.group("body").splitlines()) + "\n"
        blocks.append(
            Block(
                page=str(path.relative_to(ROOT)),
                line=text.count("\n", 0, match.start()) + 1,
                lang=match.group("lang"),
                body=body,
                mark=mark.group("kind") if mark else None,
                value=mark.group("value") if mark else "",
            )
        )
    return blocks


BLOCKS = [block for page in _pages() for block in _blocks(page)]


def _load_script(path: Path) -> object:
    from harness_testkit.fake_harness import Script

    return Script.from_file(path)


def _load_scenario(path: Path) -> object:
    from harness_testkit.simulate import load_scenario

    return load_scenario(path)


def _load_capabilities(path: Path) -> object:
    from harness_testkit.conformance import AdapterCapabilities

    return AdapterCapabilities.from_file(path)


def _load_endpoint_script(path: Path) -> object:
    from harness_testkit.model_endpoint import EndpointScript

    return EndpointScript.from_file(path)


def _load_baseline(path: Path) -> object:
    # Through the command line, which reads it as `--baseline` (exit 2 when it is bad).
    check = ["check", "harness_testkit.fake_harness:FakeHarness", "--check", "adapter.surface"]
    _succeeds(
        [sys.executable, "-m", "harness_testkit", *check, "--baseline", str(path)], path.parent
    )
    return path


def _load_expectations(path: Path) -> object:
    from harness_testkit.conformance import Expectations

    return Expectations.load(path)


def _load_workflow(path: Path) -> object:
    """The CI job ``new-adapter`` writes, for a package named ``my_runtime``."""
    template = ROOT / "conformance" / "skeleton" / "workflow.yml.tmpl"
    expected = template.read_text(encoding="utf-8").replace("{{package}}", "my_runtime")
    assert path.read_text(encoding="utf-8") == expected, "the page's workflow is stale"
    return expected


#: ``validates: KIND`` -> the loader the kit reads such a file with.
LOADERS: dict[str, Callable[[Path], object]] = {
    "script": _load_script,
    "scenario": _load_scenario,
    "capabilities": _load_capabilities,
    "endpoint-script": _load_endpoint_script,
    "baseline": _load_baseline,
    "expectations": _load_expectations,
    "workflow": _load_workflow,
}


def test_every_code_block_runs_validates_or_says_why_not() -> None:
    problems = []
    for block in BLOCKS:
        if block.mark == "not-run" and len(block.value.split()) < 3:
            problems.append(f"{block.id}: give the not-run reason in a few words")
        elif block.mark == "validates" and block.value not in LOADERS:
            problems.append(f"{block.id}: unknown kind {block.value!r}; use one of {list(LOADERS)}")
        elif block.mark == "run-in" and (block.value != "repo" or block.lang != "bash"):
            problems.append(f"{block.id}: `run-in: repo` is for bash blocks only")
        elif block.mark is None and block.lang not in ("python", "bash"):
            problems.append(
                f"{block.id}: a `{block.lang or 'plain'}` block needs a `validates:` or "
                "`not-run:` marker on the line before its fence"
            )
    assert not problems, "\n".join(problems)


def _runnable(lang: str) -> list[Block]:
    return [b for b in BLOCKS if b.lang == lang and b.mark in (None, "run-in")]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    # The console script of this environment first, as after `pip install .`.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("HARNESS_TESTKIT_DOCS_URL", None)
    return env


def _succeeds(command: list[str], cwd: Path, *, timeout: float = 300) -> None:
    completed = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=_env()
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr


@pytest.mark.parametrize("block", _runnable("python"), ids=lambda b: b.id)
def test_python_block_runs(block: Block, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(block.body, encoding="utf-8")
    _succeeds([sys.executable, "-W", "error", str(script)], tmp_path)


@pytest.mark.parametrize("block", _runnable("bash"), ids=lambda b: b.id)
def test_bash_block_runs(block: Block, tmp_path: Path) -> None:
    cwd = ROOT if block.mark == "run-in" else tmp_path
    _succeeds(["bash", "-euo", "pipefail", "-c", block.body], cwd)


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.mark == "validates"], ids=lambda b: b.id)
def test_document_block_loads(block: Block, tmp_path: Path) -> None:
    path = tmp_path / ("document.json" if block.lang == "json" else "document.yaml")
    path.write_text(block.body, encoding="utf-8")
    LOADERS[block.value](path)


def test_the_readme_fits_one_screen() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def _setup_commands() -> list[str]:
    text = README.read_text(encoding="utf-8")
    match = re.search(r"^## Set-up\n(.*?)^## ", text, re.S | re.M)
    assert match, "README.md has no '## Set-up' section"
    return [b.body.strip() for b in _blocks(README) if f"```bash\n{b.body}" in match.group(1)]


def test_the_readme_has_exactly_two_set_up_commands() -> None:
    commands = _setup_commands()
    assert len(commands) == 2, commands
    assert all("\n" not in command for command in commands), commands


def test_the_first_set_up_command_installs_and_runs_the_main_job() -> None:
    # `pip install .` and the job on a bare install are tests/test_packaging.py's; the job
    # with its outputs is docs/getting-started.md's block, run by test_bash_block_runs.
    assert _setup_commands()[0] == "pip install . && harness-testkit simulate --builtin quickstart"


def test_every_link_of_the_readme_resolves() -> None:
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    local = [t for t in targets if "://" not in t]
    assert local
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_installs_the_kit_from_a_registry(page: Path) -> None:
    # harness-testkit is not published: installs are from a checkout (`pip install .`).
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"pip install ['\"]?harness-testkit\b", text)


def test_the_licence_is_the_distributions() -> None:
    with (ROOT / "pyproject.toml").open("rb") as file:
        licence = tomllib.load(file)["project"]["license"]
    assert f"## Licence\n\n{licence}.\n" in README.read_text(encoding="utf-8")


def test_the_test_command_is_what_ci_runs() -> None:
    command = shlex.split(_setup_commands()[1].split("&&", 1)[1])
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    extras = [command[i + 1] for i, word in enumerate(command) if word == "--extra"]
    assert command[:3] == ["uv", "run", "--locked"], command
    for extra in extras:
        assert f"--extra {extra}" in ci, f".ci/run does not install the {extra} extra"
    pytest_call = " ".join(command[command.index("python") :])
    assert f"\n{pytest_call} ||" in ci, f".ci/run does not run `{pytest_call}`"


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None
    and os.environ.get("CI") != "true",
    reason="mkdocs is not installed (the docs extra: pip install -e '.[docs]')",
)
def test_the_docs_site_builds_in_strict_mode(tmp_path: Path) -> None:
    site = tmp_path / "site"
    build = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir"]
    _succeeds([*build, str(site)], ROOT, timeout=600)
    page = (site / "requirements" / "filter.html").read_text(encoding="utf-8")
    assert 'id="FILTER-007"' in page


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
    generated = {"build", "dist", "harness-testkit-out", "node_modules", "site", "__pycache__"}
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
