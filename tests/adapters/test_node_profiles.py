"""The official adapters' profiles per version, and a bootstrap recipe prepared once."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from harness_testkit.adapters.node._bootstrap import (
    PreparedBootstrap,
    link_template,
    prepare_bootstrap,
    ready_sandbox,
)
from harness_testkit.adapters.node._install import NodeRuntime, parse_node_target
from harness_testkit.adapters.node._profiles import profile_for
from harness_testkit.adapters.node._target import NodeAdapterHost
from harness_testkit.sandbox import LocalSandboxProvider
from harness_testkit.spec import HostSetupError

NODE = NodeRuntime("/usr/bin/node", "v22.0.0", "system")


def test_a_profile_applies_per_version() -> None:
    old = profile_for("@ai-sdk/harness-pi", "1.0.76")
    new = profile_for("@ai-sdk/harness-pi", "1.0.123")
    assert old is not None
    assert new is not None
    assert old.sandbox.network
    assert not new.sandbox.network
    assert "customEnv" in old.wiring.template["auth"]
    assert "scripted.host-approvals" not in old.deviations
    assert "scripted.host-approvals" in new.deviations
    assert "ADAPTER-040" in old.deviations["capability.manual-compaction"]
    assert profile_for("@ai-sdk/harness-pi") == profile_for("@ai-sdk/harness-pi", "9.9.9")
    assert profile_for("left-pad", "1.0.0") is None


def test_claude_code_offers_host_tools_through_its_mcp_server() -> None:
    profile = profile_for("@ai-sdk/harness-claude-code", "1.0.41")
    assert profile is not None
    assert profile.wiring.host_tool_name("lookup") == "mcp__harness-tools__lookup"
    assert profile.sandbox.ports == 1
    assert profile.sandbox.relay_ports
    assert profile.sandbox.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"


def test_acp_codex_gets_the_endpoint_through_its_config_not_its_recipe() -> None:
    profile = profile_for("@ai-sdk/harness-acp", "1.0.38")
    assert profile is not None
    assert profile.wiring.protocol == "openai-responses"
    config = profile.wiring.filled_home_files("http://127.0.0.1:4321")[".codex/config.toml"]
    assert 'base_url = "http://127.0.0.1:4321/v1"' in config
    assert "supports_websockets = false" in config
    # The prepared bootstrap holds the agent's arguments: no session's URL may be in them.
    settings = profile.wiring.settings("http://127.0.0.1:4321")
    assert "4321" not in repr({k: v for k, v in settings.items() if k != "env"})
    assert profile.sandbox.prepare_bootstrap
    assert profile.sandbox.env["HTTPS_PROXY"].startswith("http://127.0.0.1:")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HARNESS_TESTKIT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_recipe_is_prepared_once_and_its_folder_linked(cache: Path, tmp_path: Path) -> None:
    folder = tmp_path / "harness" / "demo"
    recipe = {
        "harnessId": "demo",
        "bootstrapDir": str(folder),
        "files": [{"path": f"{folder}/bridge.mjs", "content": "// bridge\n"}],
        "commands": [],
    }
    prepared = prepare_bootstrap(recipe, NODE)
    assert prepared.template is None
    assert folder.is_symlink()
    assert folder.resolve() == prepared.folder.resolve()
    assert (folder / "bridge.mjs").read_text() == "// bridge\n"
    assert prepared.folder.is_relative_to(cache)
    (prepared.folder / "bridge.mjs").write_text("changed\n")
    assert prepare_bootstrap(recipe, NODE) == prepared  # prepared: not written again
    assert (folder / "bridge.mjs").read_text() == "changed\n"


def test_a_relative_recipe_is_a_template_linked_into_each_session_root(
    cache: Path, tmp_path: Path
) -> None:
    # @ai-sdk/harness-acp's shape: paths relative to the session's working directory.
    recipe = {
        "harnessId": "acp-demo",
        "bootstrapDir": ".harness-bootstrap/acp-demo",
        "files": [
            {"path": ".harness-bootstrap/acp-demo/bridge.mjs", "content": "// bridge\n"},
            {"path": ".harness-bootstrap/acp-demo/implementation/x.json", "content": "{}"},
        ],
        "commands": [],
    }
    prepared = prepare_bootstrap(recipe, NODE)
    assert str(prepared.template) == ".harness-bootstrap/acp-demo"
    assert prepared.folder.is_relative_to(cache)
    assert (prepared.folder / "implementation" / "x.json").read_text() == "{}"
    assert not (Path.cwd() / ".harness-bootstrap").exists()
    roots = [tmp_path / "s1", tmp_path / "s2"]
    for root in roots:
        root.mkdir()
        link_template(prepared, root)
        link_template(prepared, root)  # a resumed session: the link is there already
        linked = root / ".harness-bootstrap" / "acp-demo"
        assert linked.is_symlink()
        assert (linked / "bridge.mjs").read_text() == "// bridge\n"
    (prepared.folder / "bridge.mjs").write_text("changed\n")
    assert prepare_bootstrap(recipe, NODE) == prepared  # prepared once per machine
    assert (roots[1] / ".harness-bootstrap" / "acp-demo" / "bridge.mjs").read_text() == (
        "changed\n"
    )
    taken = tmp_path / "s3" / ".harness-bootstrap" / "acp-demo"
    taken.mkdir(parents=True)
    with pytest.raises(HostSetupError, match="not a link the kit made"):
        link_template(prepared, tmp_path / "s3")


def test_a_recipe_the_kit_cannot_prepare_is_refused_with_the_reason(
    cache: Path, tmp_path: Path
) -> None:
    with pytest.raises(HostSetupError, match="leaves its folder"):
        prepare_bootstrap({"harnessId": "demo", "bootstrapDir": "../x"}, NODE)
    escaping = {
        "harnessId": "demo",
        "bootstrapDir": ".harness-bootstrap/x",
        "files": [{"path": ".harness-bootstrap/y/bridge.mjs", "content": ""}],
    }
    with pytest.raises(HostSetupError, match="outside its bootstrapDir"):
        prepare_bootstrap(escaping, NODE)
    outside = {
        "harnessId": "demo",
        "bootstrapDir": str(tmp_path / "a"),
        "files": [{"path": str(tmp_path / "b" / "x"), "content": ""}],
    }
    with pytest.raises(HostSetupError, match="outside its bootstrapDir"):
        prepare_bootstrap(outside, NODE)
    taken = tmp_path / "taken"
    taken.mkdir()
    with pytest.raises(HostSetupError, match="not a link the kit made"):
        prepare_bootstrap({"harnessId": "demo", "bootstrapDir": str(taken)}, NODE)


@pytest.mark.anyio
async def test_a_session_sandbox_gets_its_config_and_the_prepared_template(
    tmp_path: Path,
) -> None:
    profile = profile_for("@ai-sdk/harness-acp", "1.0.38")
    assert profile is not None
    host = NodeAdapterHost(
        parse_node_target("npm:@ai-sdk/harness-acp@1.0.38"),
        wiring=profile.wiring,
        sandbox=profile.sandbox,
    )
    folder = tmp_path / "prepared"
    folder.mkdir()
    (folder / "bridge.mjs").write_text("// bridge\n")
    host.bootstrap = PreparedBootstrap(folder, PurePosixPath(".harness-bootstrap/acp"))
    provider = LocalSandboxProvider(root_dir=tmp_path / "sandboxes")
    sandbox = await provider.create_session(session_id="s1")
    try:
        await ready_sandbox(sandbox, host, "http://127.0.0.1:4321", timeout=30.0)
        root = Path(sandbox.default_working_directory)
        assert (root / ".harness-bootstrap" / "acp" / "bridge.mjs").read_text() == "// bridge\n"
        home = (await sandbox.run('printf "%s" "$HOME"')).stdout
        config = await sandbox.read_text_file(f"{home}/.codex/config.toml")
        assert config is not None
        assert 'base_url = "http://127.0.0.1:4321/v1"' in config
    finally:
        await sandbox.destroy()


@pytest.mark.anyio
async def test_a_template_is_refused_where_the_root_is_not_this_machines() -> None:
    class Container:
        default_working_directory = "/nonexistent/harness-testkit/workspace"

    host = NodeAdapterHost(parse_node_target("npm:@ai-sdk/harness-acp@1.0.38"))
    host.bootstrap = PreparedBootstrap(Path("/x"), PurePosixPath(".harness-bootstrap/acp"))
    with pytest.raises(HostSetupError, match="only into local sandbox sessions"):
        await ready_sandbox(Container(), host, None, timeout=30.0)
