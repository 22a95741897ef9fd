"""Write a replay bundle for every deviation an official Node adapter's profile declares.

Each declared deviation is a finding about the official adapter; its bundle is the
evidence, replayed with one command::

    python -m scripts.node_findings npm:@ai-sdk/harness-pi@1.0.123 [CHECK ...]
    harness-testkit replay docs/findings/harness-pi@1.0.123/<check>.replay.json \\
        --adapter npm:@ai-sdk/harness-pi@1.0.123

The checks run without the declarations (a finding must fail on its own), at the
smoke profile and seed 0; a declared check that passes is reported, since its
declaration is stale. Exit 1 when one is. Naming checks rewrites only their bundles.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from harness_testkit.adapters.node import close_hosts, load_node_target
from harness_testkit.conformance import RunOptions, ordered_checks, run_check

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    """Run each declared check of the target in ``argv[0]`` and keep its bundle."""
    if not argv or not argv[0].startswith("npm:"):
        print(
            "usage: python -m scripts.node_findings npm:NAME@VERSION [CHECK ...]", file=sys.stderr
        )
        return 2
    spec, only = argv[0], set(argv[1:])
    target = load_node_target(spec)
    declared = dict(target.expectations.xfail) if target.expectations else {}
    unknown = only - set(declared)
    if unknown:
        print(f"not declared for {spec}: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    if only:
        declared = {check: reason for check, reason in declared.items() if check in only}
    bare = dataclasses.replace(target, expectations=None)
    name, _, version = spec.removeprefix("npm:").rpartition("@")
    out = ROOT / "docs" / "findings" / f"{name.rsplit('/', 1)[-1]}@{version}"
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("*.replay.json"):
        if not only or stale.name.removesuffix(".replay.json") in only:
            stale.unlink()
    stale_declarations = []
    try:
        checks = {check.id: check for check in ordered_checks()}
        for check_id, reason in sorted(declared.items()):
            # Little shrinking: a hung example costs the turn timeout each time it is tried.
            options = RunOptions(profile="smoke", bundle_dir=out, shrink_seconds=1.0)
            result = run_check(checks[check_id], bare, options)
            line = f"{check_id}: {result.status} {result.failed_requirement or ''}"
            print(line.rstrip(), f"({reason[:60]}...)")
            if result.status not in ("fail", "error"):
                stale_declarations.append(check_id)
    finally:
        close_hosts()
    if stale_declarations:
        print(f"declared but not failing: {', '.join(stale_declarations)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
