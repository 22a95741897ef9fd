"""The adapter room: the built-in adapter checks and what they stand on.

Nothing here is imported from outside the package; the names users need are re-exported by
:mod:`harness_testkit.conformance`.

- ``_blackbox``: any adapter through the reference agent (surface, grammar, identity,
  lifecycle, capability honesty, bootstrap).
- ``_states``: do_start's own validation of the lifecycle states it is handed.
- ``_emission``: what a scriptable adapter emits equals what its scripted model did.
- ``_tools``, ``_continuations``, ``_approvals``, ``_turns``, ``_approval_machine``,
  ``_workflow``: scripted checks (adapters with the scripting extension).
- ``_support``: helpers the scripted checks share (scripts, observations, grammar first).
- ``_registry``: the one list of every check module, in report order.
- ``_grammar`` (the stream grammar, one rule a function), ``_recording`` (the wrapper
  that records what an adapter does), ``_strategies`` (hypothesis strategies for the
  wire vocabulary), ``_transcripts`` (canonical transcripts) and ``_vectors`` (test
  vectors replayed through the reference agent).
"""
