"""Offline simulation: scenario files run through the reference agent on the fake harness.

A scenario (YAML or JSON, see ``examples/quickstart.yaml`` and the committed JSON Schema
``examples/scenario.schema.json``) names the harness script, the agent's settings, the
host tools and what the simulated users do; ``simulate`` runs many sessions of it with
bounded concurrency and reproducible ids, and reports per session and in summary.

This is the only package that imports both ``harness_testkit.reference`` and
``harness_testkit.fake_harness``.
"""

from ._engine import ClusterUnavailableError as ClusterUnavailableError
from ._engine import DaskEngine as DaskEngine
from ._engine import simulate_sharded as simulate_sharded
from ._loading import LoadedScenario as LoadedScenario
from ._loading import builtin_scenario_path as builtin_scenario_path
from ._loading import builtin_scenarios as builtin_scenarios
from ._loading import load_scenario as load_scenario
from ._loading import parse_scenario as parse_scenario
from ._runner import SimulationObserver as SimulationObserver
from ._runner import SimulationOptions as SimulationOptions
from ._runner import normalize_transcript_line as normalize_transcript_line
from ._runner import simulate as simulate
from ._scenario import Scenario as Scenario
from ._scenario import ScenarioError as ScenarioError
from ._scenario import ScenarioIssue as ScenarioIssue
from ._scenario import scenario_json_schema as scenario_json_schema
from ._summary import VOLATILE_FIELDS as SIMULATION_VOLATILE_FIELDS
from ._summary import SessionReport as SessionReport
from ._summary import SimulationSummary as SimulationSummary

__all__ = [
    "SIMULATION_VOLATILE_FIELDS",
    "ClusterUnavailableError",
    "DaskEngine",
    "LoadedScenario",
    "Scenario",
    "ScenarioError",
    "ScenarioIssue",
    "SessionReport",
    "SimulationObserver",
    "SimulationOptions",
    "SimulationSummary",
    "builtin_scenario_path",
    "builtin_scenarios",
    "load_scenario",
    "normalize_transcript_line",
    "parse_scenario",
    "scenario_json_schema",
    "simulate",
    "simulate_sharded",
]
