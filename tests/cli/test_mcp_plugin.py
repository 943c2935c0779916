"""The MCP server's recall through the warm daemon, the Claude
Code plugin shipped in the package (``lca-tui plugin path``, its hooks the same as ``hooks
install`` writes, its runner finding the interpreter and standing aside for installed hooks,
Claude Code's own ``claude plugin validate``), and ``lca-tui statusline``."""

from __future__ import annotations


import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from lca_tui.commands.plugin import plugin_dir
from lca_tui.mcp_server import Backend, recall_tool
from store import open_store
from store.harness import settings_file as sf
from tests.helpers_harness import runtime_dir, serving  # noqa: F401 - fixture

SESSION = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"


def _cli(*args: str, stdin: str = "", **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lca_tui.cli", *args], input=stdin,
                          capture_output=True, text=True, timeout=120, **kw)


@pytest.fixture
def cc_path(cc_store_template: Path, tmp_path: Path) -> Path:
    path = tmp_path / "cc.db"
    shutil.copyfile(cc_store_template, path)
    return path


# -- the MCP server is thin: recall through the daemon ---------------------------------------
def test_mcp_recall_goes_through_the_daemon(cc_path: Path, runtime_dir: Path) -> None:  # noqa: F811
    backend = Backend(str(cc_path), [], "private")
    try:
        with serving(cc_path) as daemon:
            got = backend.run(("mcp:agent", "3.0"), recall_tool, "credo linter", None, None,
                              None)
            assert daemon.counts["recalls"] == 1
        assert got["via"] == "daemon" and got["trace_id"] > 0
        # the daemon gone: the same call in this process
        again = backend.run(("mcp:agent", "3.0"), recall_tool, "credo linter", None, None,
                            None)
        assert again["via"] == "in-process"
    finally:
        backend.close()
    with open_store(cc_path) as s, s.read() as conn:
        who = conn.exec_driver_sql("SELECT writer, writer_version FROM recall_trace WHERE "
                                   "id = ?", (got["trace_id"],)).one()
    assert tuple(who) == ("mcp:agent", "3.0")  # the client, not the daemon


# -- the plugin -------------------------------------------------------------------------------
def test_plugin_path_and_its_files() -> None:
    out = _cli("plugin", "path")
    assert out.returncode == 0, out.stderr
    folder = Path(out.stdout.strip())
    assert folder == plugin_dir() and folder.is_dir()
    manifest = json.loads((folder / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "lca-tui"
    hooks = json.loads((folder / "hooks" / "hooks.json").read_text())["hooks"]
    # the same events and timeouts as `hooks install` writes
    assert {e: g[0]["hooks"][0]["timeout"] for e, g in hooks.items()} == sf.EVENTS
    for event, groups in hooks.items():
        command = groups[0]["hooks"][0]["command"]
        assert command == f'"${{CLAUDE_PLUGIN_ROOT}}/bin/lca-tui-run" hook {event}' \
            + sf.NEVER_BLOCK
        assert "/work/" not in command and sys.executable not in command  # nothing baked in
    servers = json.loads((folder / ".mcp.json").read_text())["mcpServers"]
    assert servers["lca-tui"] == {"command": "${CLAUDE_PLUGIN_ROOT}/bin/lca-tui-run",
                                  "args": ["mcp"]}
    assert os.access(folder / "bin" / "lca-tui-run", os.X_OK)


def _fake_install(tmp_path: Path) -> Path:
    """A PATH holding only an ``lca-tui`` whose first line names this interpreter (as pip's
    console scripts do)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "lca-tui"
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom lca_tui.cli import main\n"
                      "sys.exit(main())\n")
    script.chmod(0o755)
    return bin_dir


def _runner(tmp_path: Path, *args: str, path: str, stdin: str = "",
            project: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": f"{path}:/usr/bin:/bin", "HOME": str(tmp_path / "home"),
           "CLAUDE_PROJECT_DIR": str(project or tmp_path),
           "LCA_EMBEDDER": "fallback", "XDG_RUNTIME_DIR": str(tmp_path / "run"),
           "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    return subprocess.run([str(plugin_dir() / "bin" / "lca-tui-run"), *args], input=stdin,
                          capture_output=True, text=True, timeout=120, env=env,
                          cwd=str(tmp_path))


def test_plugin_runner_finds_lca_tui_itself(tmp_path: Path, cc_path: Path) -> None:
    (tmp_path / "home").mkdir()
    bin_dir = _fake_install(tmp_path)
    out = _runner(tmp_path, "plugin", "path", path=str(bin_dir))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(plugin_dir())
    stop = json.dumps({"session_id": SESSION, "transcript_path": str(tmp_path / "none.jsonl"),
                       "hook_event_name": "Stop", "cwd": str(tmp_path)})
    out = _runner(tmp_path, "hook", "Stop", "--store", str(cc_path), path=str(bin_dir),
                  stdin=stop)
    assert out.returncode == 0, out.stderr
    with open_store(cc_path) as s, s.read() as conn:
        runs = conn.exec_driver_sql("SELECT event FROM hook_run").all()
    assert ("Stop",) in [tuple(r) for r in runs]  # the plugin's hook ran lca-tui
    nothing = _runner(tmp_path, "plugin", "path", path=str(tmp_path / "empty"))
    assert nothing.returncode == 1 and "not installed where the plugin can find it" in \
        nothing.stderr


def test_plugin_hooks_stand_aside_for_installed_hooks(tmp_path: Path, cc_path: Path) -> None:
    (tmp_path / "home").mkdir()
    project = tmp_path / "proj"
    project.mkdir()
    settings = project / ".claude" / "settings.json"
    sf.apply(sf.plan_install(settings, cc_path, [sys.executable, "-S",
                                                 "/x/lca_tui/hook_client.py"]))
    bin_dir = _fake_install(tmp_path)
    stop = json.dumps({"session_id": SESSION, "transcript_path": str(tmp_path / "x.jsonl"),
                       "hook_event_name": "Stop", "cwd": str(project)})
    out = _runner(tmp_path, "hook", "Stop", "--store", str(cc_path), path=str(bin_dir),
                  stdin=stop, project=project)
    assert out.returncode == 0 and out.stdout == ""
    assert "run instead" in out.stderr and str(settings) in out.stderr
    with open_store(cc_path) as s, s.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM hook_run").scalar_one() == 0
    # and `hooks install` says so when the plugin is enabled
    (project / ".claude" / "settings.local.json").write_text(
        json.dumps({"enabledPlugins": {"lca-tui@lca-tui": True}}))
    said = _cli("hooks", "install", "--project", str(project), "--store", str(cc_path),
                env=dict(os.environ, HOME=str(tmp_path / "home")))
    assert said.returncode == 0, said.stderr
    assert "the lca-tui plugin is enabled in" in said.stdout and "never both run" in said.stdout


def _claude() -> str | None:
    """Claude Code's CLI: $LCA_TEST_CLAUDE, ``claude`` on PATH, or installed with npm into a
    cache folder kept between runs (``~/.cache/lca-tui-tests/claude-code``)."""
    given = os.environ.get("LCA_TEST_CLAUDE") or shutil.which("claude")
    if given:
        return given
    npm = shutil.which("npm")
    if npm is None:
        return None
    prefix = Path.home() / ".cache" / "lca-tui-tests" / "claude-code"
    exe = prefix / "node_modules" / ".bin" / "claude"
    prefix.parent.mkdir(parents=True, exist_ok=True)
    # Two runs on one machine share the cache: one installs while the other waits on the lock,
    # and the install goes to a folder of its own, renamed into place only when complete (a
    # half-written `claude` once failed a concurrent run with "Exec format error").
    with open(prefix.parent / "claude-code.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not exe.exists():
            staging = Path(tempfile.mkdtemp(prefix="claude-code.", dir=prefix.parent))
            done = subprocess.run([npm, "install", "--prefix", str(staging), "--no-audit",
                                   "--no-fund", "@anthropic-ai/claude-code"],
                                  capture_output=True, text=True, timeout=900)
            if done.returncode != 0 or not (staging / "node_modules" / ".bin" / "claude").exists():
                shutil.rmtree(staging, ignore_errors=True)
                return None
            shutil.rmtree(prefix, ignore_errors=True)  # a folder left by an interrupted install
            staging.rename(prefix)
    return str(exe)


def test_claude_plugin_validate(tmp_path: Path) -> None:
    claude = _claude()
    if claude is None:
        pytest.skip("npm (or its registry) is unavailable: Claude Code's validator not run")
    env = dict(os.environ, HOME=str(tmp_path))
    for folder in (plugin_dir(), plugin_dir().parent.parent):  # the plugin, the marketplace
        if folder != plugin_dir() and not (folder / ".claude-plugin").is_dir():
            continue  # an installed package: no repository around it
        out = subprocess.run([claude, "plugin", "validate", "--strict", str(folder)],
                             capture_output=True, text=True, timeout=300, env=env)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "Validation passed" in out.stdout


# -- the status line --------------------------------------------------------------------------
def _statusline(store: Path, stdin: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return _cli("statusline", "--store", str(store), stdin=stdin, **kw)


def test_statusline_in_process(cc_path: Path) -> None:
    with open_store(cc_path) as s:
        s.propose({"op": "add", "type": "feedback", "content": "Keep commits small.",
                   "metadata": {"name": "small-commits"}})
        statuses = {x.name: x.status for x in s.health().signals}
    out = _statusline(cc_path, json.dumps({"session_id": SESSION, "model": {"id": "x"}}))
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip()
    assert line.startswith("lca ctx ") and "% of checkpoint" in line
    assert " · 1 pending · health " in line
    status, name = line.rsplit(" · health ", 1)[1].split(" ")
    from store import SIGNAL_RANK as rank

    assert statuses[name] == status != "ok"  # the latest stored scan's
    assert rank[status] == max(rank[v] for v in statuses.values())  # the worst


def test_statusline_through_the_daemon(cc_path: Path, runtime_dir: Path) -> None:  # noqa: F811
    from lca_tui.commands import statusline

    with serving(cc_path) as daemon:
        before = daemon.counts["requests"]
        summary, via = statusline.summary_for(str(cc_path), [], SESSION)
        assert via == "daemon" and daemon.counts["requests"] == before + 1
    local, via = statusline.summary_for(str(cc_path), [], SESSION)
    assert via == "in-process"
    assert summary == local


@pytest.mark.parametrize("stdin", ["not json", "[1, 2]", '{"session_id": 7}', ""])
def test_statusline_never_fails(stdin: str, cc_path: Path, tmp_path: Path) -> None:
    out = _statusline(cc_path, stdin)
    assert out.returncode == 0
    assert out.stdout.count("\n") == 1 and "Traceback" not in out.stderr
    missing = tmp_path / "nowhere" / "store.db"
    out = _statusline(missing, "{}")
    assert out.returncode == 0 and out.stdout == "lca no store\n"
    assert not missing.exists() and not missing.parent.exists()
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"this is not sqlite" * 100)
    out = _statusline(broken, "{}")
    assert out.returncode == 0 and out.stdout == "lca ?\n" and out.stderr.strip()
    out = _cli("statusline", "--bogus", stdin="{}")
    assert out.returncode == 0 and out.stdout == "lca ?\n"


def test_statusline_render() -> None:
    from lca_tui.commands.statusline import render

    assert render(None) == "lca no store"
    assert render({"pressure": None, "pending": 0, "worst": None, "signals": 0}) == \
        "lca ctx - · 0 pending · health -"
    line = render({"pressure": {"percent_of_checkpoint": 104.2, "state": "over checkpoint",
                                "used_tokens": 1}, "pending": 3,
                   "worst": {"name": "index_lag", "status": "fail"}, "signals": 20})
    assert line == "lca ctx 104%! of checkpoint · 3 pending · health fail index_lag"



def test_the_fast_status_client(cc_path: Path, runtime_dir: Path) -> None:  # noqa: F811
    from lca_tui.commands.statusline import command, summary_for
    from store.health.statusline import render

    words = command(str(cc_path))
    assert words[:2] == [sys.executable, "-S"] and words[2].endswith("status_client.py")
    printed = _cli("statusline", "--command", "--store", str(cc_path))
    assert printed.stdout.split() == words
    stdin = json.dumps({"session_id": SESSION})
    env = dict(os.environ)

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(words, input=stdin, capture_output=True, text=True, timeout=60,
                              env=env)

    with serving(cc_path) as daemon:
        before = daemon.counts["requests"]
        fast = run()
        assert daemon.counts["requests"] == before + 1  # the daemon answered it
        # the client's folder left off the path: put back, the fast path taken (no `site`)
        env.update(PYTHONSAFEPATH="1", PYTHONPROFILEIMPORTTIME="1")
        safe = run()
        assert daemon.counts["requests"] == before + 2  # answered by the daemon too
        assert "hook_fast" in safe.stderr and not any(
            line.rstrip().endswith("| site") for line in safe.stderr.splitlines())
        del env["PYTHONSAFEPATH"], env["PYTHONPROFILEIMPORTTIME"]
    expected = render(summary_for(str(cc_path), [], SESSION)[0])
    assert fast.returncode == 0 and fast.stdout == expected + "\n", fast.stderr
    assert safe.returncode == 0 and safe.stdout == fast.stdout, safe.stderr
    slow = run()  # no daemon: handed to the full command, the same line
    assert slow.returncode == 0 and slow.stdout == expected + "\n", slow.stderr
    bad = subprocess.run(words, input="not json", capture_output=True, text=True, timeout=60,
                         env=env)
    assert bad.returncode == 0 and bad.stdout == "lca ?\n"
