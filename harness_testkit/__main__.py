"""Allow ``python -m harness_testkit``."""

from harness_testkit._cli import main

# Guarded so that importing the module (the API docs' inspection walks every submodule)
# does not run the command line.
if __name__ == "__main__":
    main()
