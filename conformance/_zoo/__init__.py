"""The mutant zoo: the fake harness with exactly one deliberate defect each.

- ``machinery``: the wrappers and the :class:`~.machinery.Defect` table entry;
- ``grammar``, ``tools``, ``approvals``, ``continuations``, ``lifecycle``, ``session``:
  the defects of each area, as table entries and small functions;
- ``catalog``: the one list of every area's defects;
- ``selftest``: the kill matrix (``harness-testkit selftest``).
"""
