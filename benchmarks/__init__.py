"""Benchmarks of harness-testkit: ``python -m benchmarks [--quick] [--only NAME] [--official]``.

Every number that matters is a ratio taken in one run, side by side (the compared
variants interleave round by round), so targets hold on any machine:

- ``agent``: the reference agent's overhead over the minimal scripted adapter alone, and
  on the fake harness next to the fake harness alone;
- ``scaling``: CPU per delta from 1,000 to 100,000 deltas per turn, RSS per session from
  10 to 10,000 concurrent sessions;
- ``continuations``: suspend + JSON round trip + continue next to the same turn
  uninterrupted;
- ``concurrency``: 1 to 1,000 concurrent sessions on the local sandbox, throughput and
  peak memory per session;
- ``sandbox``: sandbox provider operations next to their raw floor (Docker when an engine
  is reachable);
- ``suite``: wall time of ``harness-testkit check --self`` per conformance profile;
- ``simulate-memory`` (on request only): ``simulate``'s peak RSS at 1,000, 10,000 and
  100,000 sessions, concurrency 100, one process each (flat: bounded by the concurrency);
- ``official`` (``--official``, on request only): the reference agent next to the
  official TypeScript agent on five workloads (needs Node.js 20+).

Each module's ``measure(quick)`` (``measure(quick, scale)`` where sizes scale) returns a :class:`benchmarks._measure.Section`.
"""
