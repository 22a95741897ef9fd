"""harness-v1 adapters written for Node, checked by the kit through an adapter host.

``harness-testkit check npm:@ai-sdk/harness-pi@1.0.123`` installs the adapter (with
``npm ci`` where the kit has its lockfile), starts one adapter host process for the run
(``host/host.mjs``, on Node >= 22.19, fetched from the registry when the system Node is
older), and drives it over the host protocol (JSON-RPC 2.0 on stdio, specified in
:mod:`harness_testkit.spec`). The adapter's sandbox calls are served by the kit's own
sandbox, its model is the kit's scripted endpoint on ``127.0.0.1``, and its environment
is scrubbed. A local adapter works the same way: ``check ./my-adapter#createMyHarness``.
"""

from ._control import NodePromptControl as NodePromptControl
from ._harness import NodeHarness as NodeHarness
from ._harness import NodeSession as NodeSession
from ._install import NodeTargetSpec as NodeTargetSpec
from ._install import cache_dir as cache_dir
from ._install import find_node as find_node
from ._install import is_node_target as is_node_target
from ._install import parse_node_target as parse_node_target
from ._load import load_node_target as load_node_target
from ._load import read_settings as read_settings
from ._profiles import OFFICIAL_PROFILES as OFFICIAL_PROFILES
from ._profiles import OfficialProfile as OfficialProfile
from ._target import EndpointWiring as EndpointWiring
from ._target import NodeAdapterHost as NodeAdapterHost
from ._target import close_hosts as close_hosts

__all__ = [
    "OFFICIAL_PROFILES",
    "EndpointWiring",
    "NodeAdapterHost",
    "NodeHarness",
    "NodePromptControl",
    "NodeSession",
    "NodeTargetSpec",
    "OfficialProfile",
    "cache_dir",
    "close_hosts",
    "find_node",
    "is_node_target",
    "load_node_target",
    "parse_node_target",
    "read_settings",
]
