"""Allow ``python -m harness_testkit``."""

from harness_testkit._cli import main

main()
