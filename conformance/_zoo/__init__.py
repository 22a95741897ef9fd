"""The zoo: the proof that the suite catches what it claims to.

Nothing here is imported from outside the package; :mod:`harness_testkit.conformance` re-exports
``self_test_targets`` and ``capabilities_of``, and ``harness-testkit selftest`` runs the
kill matrix.

- ``_good_targets``: the fake harness in every capability profile, which must pass;
- ``_machinery``: the mutant wrappers and the :class:`~._machinery.Defect` table entry;
- ``_grammar``, ``_tools``, ``_approvals``, ``_continuations``, ``_lifecycle``,
  ``_session``: the defects of each area, as table entries and small functions;
- ``_catalog``: the one list of every area's defects;
- ``_selftest``: the kill matrix (``harness-testkit selftest``).
"""
