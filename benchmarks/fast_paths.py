"""What each fast path of the reference agent buys: the agent as shipped next to the agent
with one fast path switched off, on the official comparison's five workloads.

``python -m benchmarks --only fast-paths``. The fast paths live in one module,
``reference/_fast.py``, which names each one and its plain twin
(``PLAIN_PATHS``: what the agent does without it). Every variant runs in a worker
process of its own (``python -m benchmarks.fast_paths --worker NAME``): the shipped
agent, and one per fast path with its twins put in place of its functions in every
module of the package before the first run. Each worker is warmed until its time per
turn stops falling; then every round runs every worker once, in alternating order, and
each figure is the median over rounds of the per-round ratio (CPU time per turn with the
path off over the shipped agent's: the runs of a round saw the same machine).

The target of each path is that it pays for itself: switching it off costs at least
:data:`PAYS_AT` on the workload where it buys most. A path that misses it is a candidate
for deletion (its call sites go back to the plain path).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ._measure import (
    REPOSITORY,
    Column,
    LineServer,
    Sample,
    Section,
    Target,
    interleave_sync,
    median,
    warm_until_steady,
)
from ._scripted import WORKLOADS, Workload, run_python

__all__ = ["PAYS_AT", "FastPathWorker", "measure", "switched_off"]

#: A fast path pays for itself when switching it off costs at least this much CPU time
#: per turn on one workload (below it, the measurement cannot tell it from noise on a
#: shared machine, and the path is not worth its code).
PAYS_AT = 1.05
#: The variant that switches nothing off.
SHIPPED = "shipped"
REQUEST_TIMEOUT = 600.0


@contextlib.contextmanager
def switched_off(path: str) -> Iterator[None]:
    """Put the plain twins of fast path ``path`` in place of its functions, in every
    module of ``harness_testkit`` that holds them, until the block ends.

    Raises:
        KeyError: ``path`` is not a fast path of ``reference/_fast.py``.
    """
    from harness_testkit.reference import _fast

    if path not in _fast.PLAIN_PATHS:
        raise KeyError(
            f"{path!r} is not a fast path; choose from {', '.join(sorted(_fast.PLAIN_PATHS))}"
        )
    swapped: list[tuple[Any, str, Any]] = []
    for name, twin in _fast.PLAIN_PATHS[path].items():
        original = getattr(_fast, name)
        for module_name, module in list(sys.modules.items()):
            if not module_name.startswith("harness_testkit") or module is None:
                continue
            for attribute, value in list(vars(module).items()):
                if value is original:
                    setattr(module, attribute, twin)
                    swapped.append((module, attribute, original))
    try:
        yield
    finally:
        for module, attribute, original in reversed(swapped):
            setattr(module, attribute, original)


class FastPathWorker(LineServer):
    """A worker process that runs workloads with one fast path switched off (or none)."""

    def __init__(self, variant: str, scale: float) -> None:
        self.variant = variant
        argv = [sys.executable, "-m", "benchmarks.fast_paths", "--worker", variant]
        super().__init__([*argv, "--scale", str(scale)], REPOSITORY, f"the {variant!r} worker")

    def run(self, workload: str) -> Sample:
        """One run of ``workload`` in the worker.

        Raises:
            RuntimeError: the worker died, timed out or failed.
        """
        answer = self.request({"op": "run", "workload": workload}, REQUEST_TIMEOUT)
        return Sample(
            seconds=answer["seconds"],
            parts=answer["parts"],
            turns=answer["turns"],
            cpu_seconds=answer["cpu_seconds"],
        )


def _cpu_ms(sample: Sample) -> float:
    seconds = sample.cpu_seconds if sample.cpu_seconds is not None else sample.seconds
    return seconds / sample.turns * 1000


def measure(quick: bool, scale: float = 1.0) -> Section:
    """Measure what each fast path buys.

    Args:
        quick: Four rounds instead of nine, and shorter warm-ups.
        scale: Multiplies every workload's size, turns and sessions (a smoke run).

    Returns:
        The section: one row per workload, a column and a target per fast path.
    """
    from harness_testkit.reference._fast import PLAIN_PATHS

    paths = list(PLAIN_PATHS)
    section = Section(
        name="fast-paths",
        title="What each fast path of reference/_fast.py buys (CPU time per turn, path off / shipped)",
        columns=[
            Column("workload", "workload", "{}"),
            Column("shipped_cpu_ms_per_turn", "shipped CPU ms/turn", "{:.3f}"),
            *(Column(f"{_slug(path)}_off_cpu_ratio", f"{path} off", "{:.3f}x") for path in paths),
        ],
    )
    rounds = 4 if quick else 9
    max_runs = 15 if quick else 40
    workloads = [workload.scaled(scale) for workload in WORKLOADS]
    workers = [FastPathWorker(SHIPPED, scale), *(FastPathWorker(path, scale) for path in paths)]
    try:
        for workload in workloads:
            _measure_workload(section, workload, workers, rounds, max_runs)
    finally:
        for worker in workers:
            worker.close()
    for path in paths:
        key = f"{_slug(path)}_off_cpu_ratio"
        best = max(section.rows, key=lambda row: float(row[key]))
        section.targets.append(
            Target(
                id=f"fast-paths.pays.{_slug(path)}",
                description=(
                    f"CPU time per turn with {path} off over the shipped agent's, on the "
                    f"workload where it buys most ({best['workload']})"
                ),
                limit=PAYS_AT,
                measured=float(best[key]),
                unit="x",
                at_least=True,
            )
        )
        if float(best[key]) < PAYS_AT:
            section.notes.append(
                f"{path}: switching it off costs under {PAYS_AT:g}x on every workload "
                f"(at most {float(best[key]):.3f}x, {best['workload']}): it no longer pays "
                "for itself; delete it from reference/_fast.py and use the plain path"
            )
    section.notes.append(
        f"{rounds} rounds per workload (alternating order) after each worker was warmed "
        "to a steady time; ratios are medians of per-round ratios"
        + (f"; workloads scaled by {scale:g}" if scale != 1 else "")
    )
    return section


def _slug(path: str) -> str:
    return path.replace(" ", "_")


def _measure_workload(
    section: Section,
    workload: Workload,
    workers: Sequence[FastPathWorker],
    rounds: int,
    max_runs: int,
) -> None:
    variants: list[tuple[str, Callable[[], Sample]]] = []
    for worker in workers:

        def run(worker: FastPathWorker = worker) -> Sample:
            return worker.run(workload.name)

        variants.append((worker.variant, run))
    warmups = {name: warm_until_steady(run, max_runs=max_runs) for name, run in variants}
    samples = interleave_sync(rounds, variants)
    shipped = samples[SHIPPED]
    row: dict[str, Any] = {
        "workload": workload.name,
        "rounds": rounds,
        "shipped_cpu_ms_per_turn": median([_cpu_ms(sample) for sample in shipped]),
        "warmup_runs": {name: warmup.runs for name, warmup in warmups.items()},
    }
    for worker in workers[1:]:
        ratios = [
            _cpu_ms(off) / _cpu_ms(on)
            for off, on in zip(samples[worker.variant], shipped, strict=True)
        ]
        slug = _slug(worker.variant)
        row[f"{slug}_off_cpu_ratio"] = median(ratios)
        row[f"{slug}_off_cpu_range"] = f"{min(ratios):.2f}-{max(ratios):.2f}x"
        row[f"{slug}_off_cpu_ms_per_turn"] = median(
            [_cpu_ms(sample) for sample in samples[worker.variant]]
        )
    section.rows.append(row)


def _serve(variant: str, scale: float) -> None:
    """The worker's loop: one ``{"workload": name}`` line in, one sample line out."""
    workloads = {workload.name: workload.scaled(scale) for workload in WORKLOADS}
    turns = {name: workload.parts() for name, workload in workloads.items()}
    with contextlib.ExitStack() as stack:
        if variant != SHIPPED:
            stack.enter_context(switched_off(variant))
        for line in sys.stdin:
            name = json.loads(line)["workload"]
            sample = run_python(workloads[name], turn=turns[name])
            answer = {
                "ok": True,
                "seconds": sample.seconds,
                "parts": sample.parts,
                "turns": sample.turns,
                "cpu_seconds": sample.cpu_seconds,
            }
            print(json.dumps(answer), flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.fast_paths --worker NAME [--scale F]``: serve runs."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fast_paths")
    parser.add_argument("--worker", required=True, metavar="NAME")
    parser.add_argument("--scale", type=float, default=1.0)
    arguments = parser.parse_args(argv)
    _serve(arguments.worker, arguments.scale)
    return 0


if __name__ == "__main__":
    sys.exit(main())
