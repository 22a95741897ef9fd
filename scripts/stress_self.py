"""Run ``check --self`` again and again to catch flakes: ``python scripts/stress_self.py``.

Each round runs every profile given under each backend and stops at the first run
whose exit status is not 0 (its output is printed). Options: ``--rounds N`` (default
100), ``--profiles smoke,standard`` (default), ``--backends asyncio,trio`` (default),
``--check ID,...`` (default: every check).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--profiles", default="smoke,standard")
    parser.add_argument("--backends", default="asyncio,trio")
    parser.add_argument("--check", default="")
    args = parser.parse_args()
    started = time.monotonic()
    runs = 0
    for round_number in range(1, args.rounds + 1):
        for profile in args.profiles.split(","):
            for backend in args.backends.split(","):
                with tempfile.TemporaryDirectory() as bundles:
                    command = [
                        sys.executable,
                        "-m",
                        "harness_testkit",
                        "check",
                        "--self",
                        "--profile",
                        profile,
                        "--backend",
                        backend,
                        "--seed",
                        str(round_number),
                        "--bundle-dir",
                        bundles,
                    ]
                    if args.check:
                        command += ["--check", args.check]
                    done = subprocess.run(command, capture_output=True, text=True, check=False)
                runs += 1
                verdict = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
                print(f"round {round_number} {profile} {backend}: exit {done.returncode} {verdict}")
                if done.returncode != 0:
                    print(done.stdout[-20000:], done.stderr[-5000:], sep="\n")
                    return 1
    print(f"{runs} runs passed in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
