"""Benchmarks of harness-testkit: ``python -m benchmarks [--quick] [--only NAME] [--out PATH]``.

Every number that matters is a ratio taken in one run, side by side (the compared
variants interleave round by round), so targets hold on any machine:

- ``agent``: the reference agent's throughput on the fake harness next to the fake
  harness alone (the agent's overhead);
- ``continuations``: suspend + JSON round trip + continue next to the same turn
  uninterrupted;
- ``concurrency``: 1 to 1,000 concurrent sessions on the local sandbox, throughput and
  peak memory per session;
- ``sandbox``: sandbox provider operations next to their raw floor (Docker when an engine
  is reachable);
- ``suite``: wall time of ``harness-testkit check --self`` per conformance profile.

Each module's ``measure(quick)`` returns a :class:`benchmarks._measure.Section`.
"""
