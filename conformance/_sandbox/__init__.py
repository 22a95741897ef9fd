"""The sandbox room: the conformance suite for sandbox providers.

Nothing here is imported from outside the package; the names users need are re-exported by
:mod:`harness_testkit.conformance`.

- ``_model``: capabilities, target, check type and context of a provider check;
- ``_checks``: the contract checks and :data:`SANDBOX_CHECKS`, the one list of them all;
- ``_lifecycle``: lifecycle and isolation checks; ``_attacks``: what an attacker would try;
- ``_run``: ``harness-testkit check-sandbox`` and its runner;
- ``_suite``: ``SandboxSuite``, the pytest face.
"""
