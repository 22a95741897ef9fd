"""Sandbox provider overhead: each operation next to its raw floor, measured in one run.

For the local provider the floors are a bare ``anyio.open_process`` of ``true`` and a
raw file write/read; for Docker, a bare container create+start+remove, a bare exec
through the same SDK, and for files bare ``cat`` commands over the exec transport the
provider's file API uses. Ratios (provider / floor) are what to watch: absolute times depend
on the machine. No assertions: this reports, it does not judge.

Run with ``python benchmarks/sandbox.py`` (about 30 s with a Docker engine).
"""

from __future__ import annotations

import os
import posixpath
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from harness_testkit.sandbox import DockerSandboxProvider, LocalSandboxProvider
from harness_testkit.sandbox._docker_files import _exec as exec_with_stdin
from harness_testkit.spec import SandboxUnavailableError

if TYPE_CHECKING:
    from benchmarks._measure import Section

_PAYLOAD = os.urandom(64 * 1024)


async def _median(repeats: int, operation: Callable[[], Awaitable[Any]]) -> float:
    """Median wall time of ``operation`` over ``repeats`` runs, after one warm-up."""
    await operation()
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        await operation()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


async def _local(results: dict[str, dict[str, float]], repeats: int) -> None:
    with tempfile.TemporaryDirectory(prefix="harness-testkit-bench-") as base:
        provider = LocalSandboxProvider(Path(base) / "sandboxes")

        async def create() -> None:
            session = await provider.create_session(session_id=uuid.uuid4().hex)
            await session.destroy()

        def bare_directory() -> None:
            path = Path(base) / uuid.uuid4().hex
            path.mkdir()
            path.rmdir()

        async def floor_create() -> None:
            await anyio.to_thread.run_sync(bare_directory)

        session = await provider.create_session(session_id="bench")
        try:

            async def run_true() -> None:
                await session.run("true")

            async def floor_run() -> None:
                process = await anyio.open_process(
                    ["true"], stdin=subprocess.DEVNULL, start_new_session=True
                )
                async with process:
                    await process.wait()

            async def files() -> None:
                await session.write_binary_file("bench/payload.bin", _PAYLOAD)
                await session.read_binary_file("bench/payload.bin")

            raw = Path(base) / "raw.bin"

            def raw_files() -> None:
                raw.write_bytes(_PAYLOAD)
                raw.read_bytes()

            async def floor_files() -> None:
                await anyio.to_thread.run_sync(raw_files)

            results["local create+destroy"] = {
                "provider": await _median(repeats, create),
                "floor": await _median(repeats, floor_create),
            }
            results["local run('true')"] = {
                "provider": await _median(repeats, run_true),
                "floor": await _median(repeats, floor_run),
            }
            results["local 64 KiB write+read"] = {
                "provider": await _median(repeats, files),
                "floor": await _median(repeats, floor_files),
            }
        finally:
            await session.destroy()


async def _docker(
    results: dict[str, dict[str, float]], repeats: int, skipped: dict[str, str]
) -> None:
    provider = DockerSandboxProvider()
    try:
        await provider.ensure_image()
    except SandboxUnavailableError as error:
        skipped["docker"] = str(error)
        await provider.aclose()
        return
    api = provider._api
    image = provider.image

    async def create() -> None:
        session = await provider.create_session(session_id=f"bench-{uuid.uuid4().hex[:12]}")
        await session.destroy()

    def bare_container() -> None:
        created = api.create_container(
            image,
            command=["sleep", "60"],
            host_config=api.create_host_config(network_mode="none"),
            labels={"harness-testkit.kind": "benchmark"},
        )
        api.start(created["Id"])
        api.remove_container(created["Id"], force=True)

    async def floor_create() -> None:
        await anyio.to_thread.run_sync(bare_container)

    session = await provider.create_session(session_id=f"bench-{uuid.uuid4().hex[:12]}")
    try:
        container = session.container_name

        async def run_true() -> None:
            await session.run("true")

        def bare_exec() -> None:
            created = api.exec_create(container, ["true"])
            api.exec_start(created["Id"])
            api.exec_inspect(created["Id"])

        async def floor_run() -> None:
            await anyio.to_thread.run_sync(bare_exec)

        async def files() -> None:
            await session.write_binary_file("bench/payload.bin", _PAYLOAD)
            await session.read_binary_file("bench/payload.bin")

        # The provider's file API runs `cat` in an exec as the session user (the
        # container's root filesystem is read-only, and the engine's archive API cannot
        # see the tmpfs workspace): the floor is the same exec transport running bare
        # `cat`s, without the provider's checks (file kind, parent directories, size).
        raw_path = posixpath.join(provider.working_directory, "raw.bin")

        def raw_exec(argv: list[str], stdin: bytes | None) -> bytes:
            code, out, err = exec_with_stdin(
                api,
                container,
                provider.user,
                argv,
                stdin=stdin,
                timeout=60,
                shown=raw_path,
                verb="benchmark",
            )
            if code != 0:
                raise RuntimeError(f"raw {argv!r} failed with exit {code}: {err!r}")
            return out

        def raw_files() -> None:
            raw_exec(["/bin/sh", "-c", 'exec cat > "$1"', "write", raw_path], _PAYLOAD)
            if len(raw_exec(["cat", raw_path], None)) != len(_PAYLOAD):
                raise RuntimeError("the raw read returned a different number of bytes")

        async def floor_files() -> None:
            await anyio.to_thread.run_sync(raw_files)

        results["docker create+destroy"] = {
            "provider": await _median(max(3, repeats // 3), create),
            "floor": await _median(max(3, repeats // 3), floor_create),
        }
        results["docker run('true')"] = {
            "provider": await _median(repeats, run_true),
            "floor": await _median(repeats, floor_run),
        }
        results["docker 64 KiB write+read"] = {
            "provider": await _median(repeats, files),
            "floor": await _median(repeats, floor_files),
        }
    finally:
        await session.destroy()
        await provider.aclose()


def run(
    results: dict[str, dict[str, float]],
    *,
    repeats: int = 15,
    skipped: dict[str, str] | None = None,
) -> None:
    """Measure both providers and add ``{operation: {provider, floor, ratio}}`` to ``results``.

    Args:
        results: Filled in place; times are median seconds.
        repeats: Samples per measurement (Docker creation takes a third of them).
        skipped: Filled with ``{"docker": reason}`` when no Docker engine is reachable
            (the reason is printed when not given).
    """
    reasons: dict[str, str] = {} if skipped is None else skipped

    async def main() -> None:
        await _local(results, repeats)
        await _docker(results, repeats, reasons)

    anyio.run(main)
    for entry in results.values():
        entry["ratio"] = entry["provider"] / entry["floor"] if entry["floor"] else float("inf")
    if skipped is None:
        for name, reason in reasons.items():
            print(f"{name.capitalize()} skipped: {reason}")


def format_table(results: dict[str, dict[str, float]]) -> str:
    """Render the results as a plain-text table.

    Args:
        results: What :func:`run` produced.

    Returns:
        The table.
    """
    lines = [f"{'operation':<28} {'provider':>12} {'raw floor':>12} {'ratio':>8}"]
    for name, entry in results.items():
        lines.append(
            f"{name:<28} {entry['provider'] * 1000:>10.2f}ms {entry['floor'] * 1000:>10.2f}ms "
            f"{entry['ratio']:>7.2f}x"
        )
    return "\n".join(lines)


def measure(quick: bool) -> Section:
    """The ``python -m benchmarks`` entry: :func:`run` as a section of the results.

    Args:
        quick: 5 samples per measurement instead of 15.

    Returns:
        One row per operation (milliseconds and the ratio to the floor), and a
        ``skipped`` row per provider that could not run, with the reason.
    """
    # Imported here: run as a script (`python benchmarks/sandbox.py`) the package is not
    # importable, and the script does not need it.
    from benchmarks._measure import Column, Section

    section = Section(
        name="sandbox",
        title="Sandbox providers: each operation next to its raw floor",
        columns=[
            Column("operation", "operation", "{}"),
            Column("provider_ms", "provider ms", "{:.2f}"),
            Column("floor_ms", "raw floor ms", "{:.2f}"),
            Column("ratio", "ratio", "{:.2f}x"),
            Column("status", "status", "{}"),
        ],
    )
    started = time.perf_counter()
    repeats = 5 if quick else 15
    measured: dict[str, dict[str, float]] = {}
    skipped: dict[str, str] = {}
    run(measured, repeats=repeats, skipped=skipped)
    for name, entry in measured.items():
        section.rows.append(
            {
                "operation": name,
                "repeats": repeats,
                "provider_ms": entry["provider"] * 1000,
                "floor_ms": entry["floor"] * 1000,
                "ratio": entry["ratio"],
                "status": "measured",
            }
        )
    for name, reason in skipped.items():
        first_sentence = reason.split(". ")[0].rstrip(".")
        section.rows.append(
            {"operation": name, "status": f"skipped: {first_sentence}", "reason": reason}
        )
        section.notes.append(f"{name} rows skipped: {reason}")
    section.seconds = time.perf_counter() - started
    return section


if __name__ == "__main__":
    measured: dict[str, dict[str, float]] = {}
    run(measured)
    print(format_table(measured))
