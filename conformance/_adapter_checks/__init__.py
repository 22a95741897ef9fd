"""The built-in adapter checks, one module per area; ``registry.py`` lists them.

- ``blackbox``: any adapter through the reference agent (surface, grammar, identity,
  lifecycle, capability honesty, bootstrap).
- ``states``: do_start's own validation of the lifecycle states it is handed.
- ``emission``: what a scriptable adapter emits equals what its scripted model did.
- ``tools``, ``continuations``, ``approvals``, ``turns``, ``approval_machine``,
  ``workflow``: scripted checks (adapters with the scripting extension).
- ``support``: helpers the scripted checks share (scripts, observations, grammar first).
"""
