"""The house rules of the package layout, checked on the source (no imports executed).

One idea: every architecture rule of the project, so a newcomer reads them in one place.

- Packages talk through facades: no module (library or test) imports a private module
  (a ``_name`` component) of another package. Tests may import private modules of the
  package they test (``tests/<package>/``; ``tests/zoo`` belongs to ``conformance``).
- Layering: ``common`` builds on ``spec`` only (every package above may use it);
  ``sandbox`` on ``spec`` and ``common``;
  ``reference`` on ``spec`` and ``sandbox`` (plus lazy re-exports of ``simulate`` names);
  ``simulate`` is the only package that imports both ``reference`` and ``fake_harness``.
- No import cycle between modules at file level (imports under ``TYPE_CHECKING`` and
  imports inside functions are not file-level).
- Size: a module (library, test, benchmark or script) over 800 lines says in its docstring,
  on a line starting ``One idea:``, which one idea needs the length.
- The agent's turn: its state, machine, effects and translation do no I/O and never
  wait; the turn core's state changes only through its own transition methods.
- ``conformance`` is a core and three private rooms (``_adapter``, ``_sandbox``, ``_zoo``)
  of private modules; it imports itself only relatively; rooms import the core, the zoo
  also the adapter room, and only named core modules import a room.
- The error tree: ``spec/_errors.py`` draws every exception class the packages define,
  in the tree under a class it derives from, or outside it with the reason on its line.
- The root package holds only its CLI and the pytest plugin, and the packages take only
  ``__version__`` from it (shared helpers live in ``common``).
- Names: no two modules of a folder differ only by an ending or a letter; no test file
  repeats its folder's name.
- Speed tricks have one home per package, a module named ``_fast.py`` whose docstring says
  what each of its fast paths buys and what its plain path is: nothing else writes
  pydantic's private slots, builds objects with ``object.__new__``, calls asyncio's
  private ``_get_running_loop`` or names ``construct_trusted`` (``from_trusted`` is gone),
  and no comment or docstring quotes nanoseconds, microseconds or instruction counts
  (cost figures go in ``benchmarks/RESULTS.md``).
- In tests, benchmarks and scripts every ``# type: ignore[code]`` says why (a comment after
  it on its line, or a comment line right above).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Top-level folder -> package name in the ``harness_testkit`` namespace.
PACKAGES = {
    "harness_testkit": "",
    "spec": "spec",
    "common": "common",
    "scripting": "scripting",
    "reference": "reference",
    "fake_harness": "fake_harness",
    "conformance": "conformance",
    "sandbox": "sandbox",
    "simulate": "simulate",
    "model_endpoint": "model_endpoint",
    "adapters": "adapters",
}
#: Test folders whose tests may open their own package's private modules.
TEST_OWNERS = {
    "spec": "spec",
    "common": "common",
    "scripting": "scripting",
    "reference": "reference",
    "fake_harness": "fake_harness",
    "conformance": "conformance",
    "zoo": "conformance",
    "sandbox": "sandbox",
    "simulate": "simulate",
    "model_endpoint": "model_endpoint",
    "adapters": "adapters",
}
#: Which packages each package may import at file level (besides itself and the root).
ALLOWED_DEPENDENCIES = {
    "spec": set(),
    "common": {"spec"},
    "scripting": {"spec", "common"},
    "sandbox": {"spec", "common"},
    "reference": {"spec", "sandbox"},
    "fake_harness": {"spec", "common", "scripting"},
    "simulate": {"spec", "common", "sandbox", "reference", "fake_harness", "scripting"},
    "conformance": {"spec", "common", "sandbox", "reference", "fake_harness", "scripting"},
    "model_endpoint": {"spec", "common", "scripting"},
    # A real adapter implements the scripting extension against its contract
    # (`scripting`), never by importing the fake runtime.
    "adapters": {"spec", "sandbox", "scripting", "model_endpoint", "conformance"},
}


#: Lines a module may have before its docstring must say why (see ``One idea:`` above).
MODULE_LINE_LIMIT = 800
#: The docstring line that justifies a long module: the marker, then the idea in words.
ONE_IDEA = "One idea:"
#: Folders besides the packages whose modules the size rule covers.
OTHER_SOURCE_FOLDERS = ("tests", "benchmarks", "scripts")


def _library_files() -> Iterator[tuple[str, Path]]:
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield package, path


def _module_name(package: str, path: Path, folder: Path) -> str:
    parts = list(path.relative_to(folder).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["harness_testkit", *([package] if package else []), *parts])


def _imports(tree: ast.Module, package: str, *, file_level: bool) -> Iterator[tuple[int, str]]:
    """Absolute names imported by ``tree``; relative imports resolve against ``package``."""

    def visit(body: list[ast.stmt]) -> Iterator[ast.stmt]:
        for node in body:
            if isinstance(node, ast.If) and _is_type_checking(node.test):
                if not file_level:
                    yield from visit(node.body)
                yield from visit(node.orelse)
                continue
            yield node
            if not file_level:
                for child in ast.walk(node):
                    if child is not node and isinstance(child, (ast.Import, ast.ImportFrom)):
                        yield child
            elif isinstance(node, (ast.If, ast.Try)):
                for block in (
                    node.body,
                    node.orelse,
                    *([h.body for h in node.handlers] if isinstance(node, ast.Try) else []),
                ):
                    yield from visit(block)

    for node in visit(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def _is_type_checking(test: ast.expr) -> bool:
    """``if TYPE_CHECKING:`` under any alias (``_TYPE_CHECKING``) or as ``typing.TYPE_CHECKING``."""
    return (isinstance(test, ast.Name) and test.id.lstrip("_") == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _package_of(name: str) -> str | None:
    parts = name.split(".")
    if parts[0] != "harness_testkit":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in PACKAGES else ""


def _private_of_other(name: str, own: str | None) -> bool:
    parts = name.split(".")
    if parts[0] != "harness_testkit" or len(parts) < 3 or parts[1] not in PACKAGES:
        return False
    return parts[1] != own and any(p.startswith("_") for p in parts[2:])


def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _relative_module(package: str, path: Path) -> str:
    """The package that relative imports in ``path`` resolve against."""
    folder = ROOT / (package or "harness_testkit")
    name = _module_name(package, path, folder)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def test_no_module_opens_another_packages_private_modules() -> None:
    offenders = []
    for package, path in _library_files():
        anchor = _relative_module(package, path)
        for line, name in _imports(_parse(path), anchor, file_level=False):
            if _private_of_other(name, package):
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    for path in sorted((ROOT / "tests").rglob("*.py")):
        parts = path.relative_to(ROOT / "tests").parts
        own = TEST_OWNERS.get(parts[0]) if len(parts) > 1 else None
        for line, name in _imports(_parse(path), "tests", file_level=False):
            if _private_of_other(name, own):
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert not offenders, "imports of another package's private modules:\n" + "\n".join(offenders)


@pytest.mark.parametrize("package", sorted(ALLOWED_DEPENDENCIES))
def test_packages_import_only_the_layers_below_them(package: str) -> None:
    allowed = ALLOWED_DEPENDENCIES[package] | {package, ""}
    offenders = []
    for own, path in _library_files():
        if own != package:
            continue
        for line, name in _imports(_parse(path), _relative_module(own, path), file_level=True):
            target = _package_of(name)
            if target is not None and target not in allowed:
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert not offenders, f"{package} imports outside its layer:\n" + "\n".join(offenders)


def test_no_import_cycle_between_modules_at_file_level() -> None:
    modules: dict[str, Path] = {}
    for package, path in _library_files():
        folder = ROOT / (package or "harness_testkit")
        modules[_module_name(package, path, folder)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = _package_of(name) or ""
        edges = set()
        for _, imported in _imports(_parse(path), _relative_module(package, path), file_level=True):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name and not name.startswith(imported + "."):
                edges.add(imported)
        graph[name] = edges
    cycles = _cycles(graph)
    assert not cycles, "file-level import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def connect(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                connect(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def _all_source_files() -> Iterator[Path]:
    for _, path in _library_files():
        yield path
    for folder in OTHER_SOURCE_FOLDERS:
        yield from sorted((ROOT / folder).rglob("*.py"))


def _line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _says_why_it_is_long(path: Path) -> bool:
    """The module docstring has a line ``One idea: <the idea, in words>``."""
    docstring = ast.get_docstring(_parse(path)) or ""
    return any(
        line.strip().startswith(ONE_IDEA) and len(line.strip()) > len(ONE_IDEA) + 10
        for line in docstring.splitlines()
    )


def test_a_module_over_800_lines_says_which_one_idea_needs_them() -> None:
    offenders = []
    for path in _all_source_files():
        relative = path.relative_to(ROOT).as_posix()
        lines = _line_count(path)
        if lines <= MODULE_LINE_LIMIT:
            continue
        if not _says_why_it_is_long(path):
            offenders.append(f"{relative}: {lines} lines")
    assert not offenders, (
        f"modules over {MODULE_LINE_LIMIT} lines without a '{ONE_IDEA} ...' line in their "
        "docstring (split them, or say which one idea needs the length):\n" + "\n".join(offenders)
    )


#: The agent's turn: plain state and its transitions, the pure machine, its effects and
#: the pure per-part translation. None of them may wait or touch the outside world.
PURE_TURN_MODULES = (
    "reference/_turn_state.py",
    "reference/_turn_machine.py",
    "reference/_effects.py",
    "reference/_translate.py",
)
#: Libraries that would bring I/O or an event loop into a pure module.
IO_MODULES = {"anyio", "asyncio", "trio", "os", "socket", "subprocess", "time", "threading"}
#: The turn core's state; only its own methods (``_turn_state.py``) assign it.
TURN_CORE_FIELDS = {
    "state",
    "pending_approvals",
    "pending_results",
    "frozen",
    "suspending",
    "captured_state",
    "buffered_parts",
    "settled_call_ids",
    "capture_error",
}


def test_the_turn_machine_and_its_state_do_no_io() -> None:
    offenders = []
    for relative in PURE_TURN_MODULES:
        tree = ast.parse((ROOT / relative).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.AsyncFunctionDef | ast.Await | ast.AsyncFor | ast.AsyncWith):
                offenders.append(f"{relative}:{node.lineno}: {type(node).__name__}")
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            offenders += [
                f"{relative}:{getattr(node, 'lineno', 0)}: imports {name}"
                for name in names
                if name.split(".")[0] in IO_MODULES
            ]
    assert not offenders, "the pure turn modules must not wait or do I/O:\n" + "\n".join(offenders)


def _core_field(target: ast.expr) -> str | None:
    """``core.state`` / ``self._core.pending_results[k]`` -> the field a target writes."""
    while isinstance(target, ast.Subscript):
        target = target.value
    if not isinstance(target, ast.Attribute) or target.attr not in TURN_CORE_FIELDS:
        return None
    owner = target.value
    name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
    return target.attr if name in ("core", "_core") else None


def test_the_turn_state_changes_only_through_the_core_transitions() -> None:
    offenders = []
    for path in sorted((ROOT / "reference").glob("*.py")):
        if path.name == "_turn_state.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign | ast.Delete):
                targets = list(node.targets)
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("clear", "pop", "update", "append", "extend", "add")
            ):
                targets = [node.func.value]
            for target in targets:
                field = _core_field(target)
                if field is not None:
                    line = getattr(node, "lineno", 0)
                    offenders.append(f"reference/{path.name}:{line}: writes core.{field}")
    assert not offenders, (
        "TurnCore's state changes only through its transition methods (_turn_state.py):\n"
        + "\n".join(offenders)
    )


def test_every_type_ignore_outside_the_packages_says_why() -> None:
    bare = re.compile(r"# type: ignore\[[^\]]+\]\s*$")
    offenders = []
    for folder in OTHER_SOURCE_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            lines = path.read_text(encoding="utf-8").splitlines()
            for number, line in enumerate(lines, start=1):
                above = lines[number - 2].strip() if number > 1 else ""
                if bare.search(line) and not above.startswith("#"):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, (
        "type: ignore without a reason (add '  # why' after it, or narrow the type):\n"
        + "\n".join(offenders)
    )


#: ``conformance`` is a core (its top-level modules) and these rooms, each a private
#: subpackage of private modules.
CONFORMANCE_ROOMS = ("_adapter", "_sandbox", "_zoo")
#: Which rooms each room may import at file level (every room may import the core).
ROOM_DEPENDENCIES: dict[str, set[str]] = {
    "_adapter": set(),
    "_sandbox": set(),
    "_zoo": {"_adapter"},
}
#: The core modules that may import a room's modules at file level (the facade re-exports
#: them; the runner reads the check registry; the context wraps adapters in the recorder).
CORE_ROOM_IMPORTS: dict[str, set[str]] = {
    "__init__": {"_adapter", "_sandbox", "_zoo"},
    "_context": {"_adapter"},
    "_runner": {"_adapter"},
    "_cli": {"_adapter"},
    "_suite": {"_adapter"},
}


def _conformance_files() -> Iterator[Path]:
    yield from sorted((ROOT / "conformance").rglob("*.py"))


def _room_of(path: Path) -> str:
    """``_adapter`` for ``conformance/_adapter/_grammar.py``; ``""`` for the core."""
    parts = path.relative_to(ROOT / "conformance").parts
    return parts[0] if len(parts) > 1 else ""


def test_conformance_is_a_core_and_its_private_rooms() -> None:
    folders = sorted(
        p.name for p in (ROOT / "conformance").iterdir() if p.is_dir() and any(p.glob("*.py"))
    )
    assert folders == sorted(CONFORMANCE_ROOMS), f"conformance's rooms: {folders}"
    public = [
        path.relative_to(ROOT).as_posix()
        for path in _conformance_files()
        if path.name != "__init__.py" and not path.name.startswith("_")
    ]
    assert not public, "every conformance module is private (_name.py):\n" + "\n".join(public)
    prefixed = [
        path.name
        for path in (ROOT / "conformance").glob("*.py")
        if any(path.stem.startswith(f"{room}_") for room in CONFORMANCE_ROOMS)
    ]
    assert not prefixed, f"a room's module sits in the core under the room's prefix: {prefixed}"


def test_conformance_imports_itself_only_relatively() -> None:
    offenders = []
    for path in _conformance_files():
        for node in ast.walk(_parse(path)):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            offenders += [
                f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}: {name}"
                for name in names
                if name == "harness_testkit.conformance"
                or name.startswith("harness_testkit.conformance.")
            ]
    assert not offenders, (
        "inside conformance every import of the package is relative:\n" + "\n".join(offenders)
    )


def test_conformance_rooms_import_only_the_core_and_their_lower_rooms() -> None:
    offenders = []
    for path in _conformance_files():
        room = _room_of(path)
        if room:
            allowed = ROOM_DEPENDENCIES[room] | {room}
        else:
            allowed = CORE_ROOM_IMPORTS.get(path.stem, set())
        anchor = _relative_module("conformance", path)
        for line, name in _imports(_parse(path), anchor, file_level=True):
            parts = name.split(".")
            if parts[:2] != ["harness_testkit", "conformance"] or len(parts) < 3:
                continue
            target = parts[2]
            if target in CONFORMANCE_ROOMS and target not in allowed:
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert not offenders, "room imports outside the rooms' layering:\n" + "\n".join(offenders)


#: The module whose docstring draws the error tree, and the line that starts the drawing
#: of the exceptions outside it.
ERRORS_MODULE = "spec/_errors.py"
OUTSIDE_THE_TREE = "Outside the tree"
#: A drawn class: ``+-- Name`` at some depth, then an optional ``(note)``.
_DRAWN = re.compile(r"^(?P<indent>[ |]*)\+-- (?P<name>\w+)\s*(?P<note>\(.*)?$")
_DRAWN_ROOT = re.compile(r"^\s+(?P<name>\w+)\s*(?P<note>\(.*)?$")


def _builtin_exceptions() -> set[str]:
    import builtins

    return {
        name
        for name, value in vars(builtins).items()
        if isinstance(value, type) and issubclass(value, BaseException)
    }


def _kit_exception_classes() -> dict[str, tuple[str, list[str]]]:
    """Class name -> (where, base names) of every exception class the packages define."""
    classes: list[tuple[str, str, list[str]]] = []
    for _, path in _library_files():
        for node in ast.walk(_parse(path)):
            if isinstance(node, ast.ClassDef):
                bases = [
                    base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
                    for base in node.bases
                ]
                classes.append((node.name, f"{path.relative_to(ROOT)}:{node.lineno}", bases))
    exceptions = _builtin_exceptions()
    found: dict[str, tuple[str, list[str]]] = {}
    changed = True
    while changed:
        changed = False
        for name, where, bases in classes:
            if where in {w for w, _ in found.values()}:
                continue
            if any(b in exceptions or b in found for b in bases):
                assert name not in found, f"two exception classes named {name}: {where}"
                found[name] = (where, bases)
                changed = True
    return found


def _derives_directly(bases: list[str], parent: str | None) -> bool:
    """``parent`` is one of ``bases``; a built-in parent (the drawing's roots) also
    admits a built-in base below it (``NoSuchToolError(LookupError)`` under Exception)."""
    import builtins

    if parent in bases:
        return True
    root = getattr(builtins, parent or "", None)
    return isinstance(root, type) and any(
        isinstance(base := getattr(builtins, name, None), type) and issubclass(base, root)
        for name in bases
    )


def _drawing(block: str) -> list[tuple[str, str | None, str]]:
    """(name, drawn parent, note) of every class a drawing block shows, roots included."""
    entries: list[tuple[str, str | None, str]] = []
    parents: list[tuple[int, str]] = []
    for line in block.splitlines():
        drawn = _DRAWN.match(line)
        root = _DRAWN_ROOT.match(line) if drawn is None else None
        if drawn is not None:
            depth = len(drawn["indent"])
            while parents and parents[-1][0] >= depth:
                parents.pop()
            parent = parents[-1][1] if parents else None
            entries.append((drawn["name"], parent, drawn["note"] or ""))
            parents.append((depth, drawn["name"]))
        elif root is not None and line.startswith("    ") and not line.startswith("     "):
            parents = [(-1, root["name"])]
            entries.append((root["name"], None, root["note"] or ""))
    return entries


def _error_drawings() -> tuple[
    list[tuple[str, str | None, str]], list[tuple[str, str | None, str]]
]:
    docstring = ast.get_docstring(_parse(ROOT / ERRORS_MODULE)) or ""
    tree, _, outside = docstring.partition(OUTSIDE_THE_TREE)
    return _drawing(tree), _drawing(outside)


def test_every_exception_of_the_kit_is_in_the_drawn_error_tree() -> None:
    tree, outside = _error_drawings()
    builtins = _builtin_exceptions()
    assert [name for name, parent, _ in tree if parent is None] == ["Exception"], (
        f"the error tree of {ERRORS_MODULE} has one root, Exception"
    )
    kit = _kit_exception_classes()
    drawn = {name: parent for name, parent, _ in [*tree, *outside] if name not in builtins}
    missing = [f"{where}: {name}" for name, (where, _) in sorted(kit.items()) if name not in drawn]
    assert not missing, (
        f"exceptions the kit defines but {ERRORS_MODULE} does not draw (derive them from a "
        f"class of the tree, or draw them '{OUTSIDE_THE_TREE}' with the reason):\n"
        + "\n".join(missing)
    )
    stale = sorted(name for name in drawn if name not in kit)
    assert not stale, f"{ERRORS_MODULE} draws classes the kit does not define: {stale}"
    wrong = [
        f"{kit[name][0]}: {name} is drawn under {parent} but derives from {kit[name][1]}"
        for name, parent in drawn.items()
        if not _derives_directly(kit[name][1], parent)
    ]
    assert not wrong, "the drawing and the classes disagree:\n" + "\n".join(wrong)


def test_every_exception_outside_the_tree_says_why() -> None:
    _, outside = _error_drawings()
    roots = {name for name, parent, _ in outside if parent is None}
    assert roots, f"{ERRORS_MODULE} has no '{OUTSIDE_THE_TREE}' drawing"
    unexplained = [
        name for name, parent, note in outside if parent in roots and not note.strip("() ")
    ]
    assert not unexplained, (
        f"classes drawn '{OUTSIDE_THE_TREE}' without a (reason) on their line: {unexplained}"
    )


#: The root package holds the command line (``_cli``, ``__main__`` and the ``schemas``
#: command, which reads the conformance and simulate packages) and the pytest plugin.
ROOT_MODULES = {"__init__", "__main__", "_cli", "_schemas", "_pytest_plugin"}


def test_the_root_package_holds_only_the_cli_and_the_plugin() -> None:
    modules = {path.stem for path in (ROOT / "harness_testkit").glob("*.py")}
    assert modules == ROOT_MODULES, (
        f"the root package holds {sorted(modules)}; shared helpers belong in a package "
        "below the ones that use them (common/), the root keeps the CLI and the plugin"
    )


def test_packages_take_only_the_version_from_the_root() -> None:
    offenders = []
    for package, path in _library_files():
        if not package:
            continue
        for line, name in _imports(_parse(path), _relative_module(package, path), file_level=False):
            parts = name.split(".")
            outside = parts[0] == "harness_testkit" and len(parts) > 1 and parts[1] not in PACKAGES
            if outside and parts[1:] != ["__version__"]:
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert not offenders, (
        "packages import the root package's modules (the root is the top: its CLI and "
        "plugin import the packages, not the other way round):\n" + "\n".join(offenders)
    )


def _near_identical(first: str, second: str) -> bool:
    """``script``/``scripting``, ``turn``/``turns``: one name is the other plus a short
    ending, or the two differ in a letter or two."""
    import difflib

    short, long = sorted((first, second), key=len)
    if long.startswith(short) and len(long) - len(short) <= 3:
        return True
    return difflib.SequenceMatcher(None, first, second).ratio() >= 0.8


def test_no_two_modules_of_a_folder_have_near_identical_names() -> None:
    offenders = []
    folders = sorted({path.parent for _, path in _library_files()})
    for folder in folders:
        stems = sorted(
            path.stem.lstrip("_")
            for path in folder.glob("*.py")
            if path.stem not in ("__init__", "__main__")
        )
        offenders += [
            f"{folder.relative_to(ROOT)}: _{first}.py and _{second}.py"
            for index, first in enumerate(stems)
            for second in stems[index + 1 :]
            if _near_identical(first, second)
        ]
    assert not offenders, (
        "modules whose names differ by an ending or a letter (name each for what it is):\n"
        + "\n".join(offenders)
    )


def test_no_test_file_repeats_its_folders_name() -> None:
    offenders = [
        path.relative_to(ROOT).as_posix()
        for path in sorted((ROOT / "tests").rglob("test_*.py"))
        if path.parent != ROOT / "tests"
        and (
            path.stem == f"test_{path.parent.name}"
            or path.stem.startswith(f"test_{path.parent.name}_")
        )
    ]
    assert not offenders, (
        "test files that repeat their folder's name (tests/x/test_x_y.py -> tests/x/test_y.py):\n"
        + "\n".join(offenders)
    )


# -- speed tricks: one home per package --------------------------------------------------------

#: The module of a package that holds its fast paths.
FAST_MODULE = "_fast.py"
#: What only a fast module may say: the private slots of a pydantic model, building an
#: object without its constructor, asyncio's private loop accessor, the trusted builder.
SPEED_TRICKS = (
    "__pydantic_fields_set__",
    "__pydantic_extra__",
    "__pydantic_private__",
    "object.__new__",
    "_get_running_loop",
    "construct_trusted",
    "from_trusted",
)
#: A cost figure: nanoseconds, microseconds or instructions counted.
COST_FIGURE = re.compile(
    r"\b\d[\d,.]*\s*(?:ns|us|µs|nanoseconds?|microseconds?)\b"
    r"|\b\d[\d,.]*\s*k?\s+instructions\b"
    r"|\b(?:hundred|thousand|million) instructions\b",
    re.IGNORECASE,
)


def _names_and_attributes(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Every name, attribute, string constant and imported name of ``tree``, with the
    dotted form of ``object.__new__``-like attributes."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.lineno, node.id
        elif isinstance(node, ast.Attribute):
            base = node.value.id if isinstance(node.value, ast.Name) else ""
            yield node.lineno, node.attr
            yield node.lineno, f"{base}.{node.attr}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
        elif isinstance(node, ast.ImportFrom | ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            yield node.lineno, node.name


def test_speed_tricks_live_only_in_each_packages_fast_module() -> None:
    offenders = []
    for _package, path in _library_files():
        if path.name == FAST_MODULE:
            continue
        tree = _parse(path)
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and id(node) in docstrings:
                node.value = ""  # a docstring may name a trick; the code may not use one
        for line, text in _names_and_attributes(tree):
            for trick in SPEED_TRICKS:
                if trick == text or (trick.startswith(("__", "_get")) and trick in text):
                    offenders.append(f"{path.relative_to(ROOT)}:{line}: {trick}")
    assert not offenders, (
        "speed tricks outside the packages' _fast.py modules (move them there, with what "
        "they buy, or use the plain path):\n" + "\n".join(sorted(set(offenders)))
    )


def test_each_fast_module_says_what_its_paths_buy_and_their_plain_paths() -> None:
    fast_modules = [path for _package, path in _library_files() if path.name == FAST_MODULE]
    assert fast_modules, "reference/_fast.py holds the agent's fast paths"
    for path in fast_modules:
        docstring = ast.get_docstring(_parse(path)) or ""
        assert "buys" in docstring, f"{path.relative_to(ROOT)}: say what each fast path buys"
        assert "Plain path" in docstring, f"{path.relative_to(ROOT)}: name each plain path"
        assert "benchmarks" in docstring, f"{path.relative_to(ROOT)}: say where it is measured"
    # one per package: a package's folder holds at most one
    folders = [path.parent for path in fast_modules]
    assert len(folders) == len(set(folders))


def _comments_and_docstrings(path: Path) -> Iterator[tuple[int, str]]:
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring and node.body:
                yield node.body[0].lineno, docstring


def test_no_comment_or_docstring_quotes_a_cost_figure() -> None:
    offenders = []
    sources = [path for _package, path in _library_files()]
    sources += [
        path for folder in OTHER_SOURCE_FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))
    ]
    for path in sources:
        for line, text in _comments_and_docstrings(path):
            found = COST_FIGURE.search(text)
            if found:
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {found.group(0)!r}")
    assert not offenders, (
        "cost figures in comments or docstrings (they go in benchmarks/RESULTS.md):\n"
        + "\n".join(offenders)
    )
