"""``lca-tui mcp``: the MCP server driven by the official SDK's own clients over
stdio and streamable HTTP, its channel rule (nothing a channel may not see leaves), the
writer it records, an erasure making it let go of its store, and ``mcp install|uninstall``
leaving client configuration files byte-identical."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

from lca_tui.mcp_server import TOOLS, Backend, get_memory_tool, list_memories_tool, search_tool
from store import open_store

SECRET_TEXT = "zebra-banana-42 is the vault's launch code"
SECRET_NAME = "vault-launch-code"
PRIVATE_TEXT = "The user's home lab runs on a quokka-named server"
CLIENT = Implementation(name="pytest-agent", version="7.1.2")
CALL_TIMEOUT = timedelta(seconds=90)
FORBIDDEN = ("approve", "reject", "erase", "redact", "preview", "reveal", "mark")


def _add(store: Any, content: str, name: str, sensitivity: str = "public",
         type: str = "feedback") -> int:
    info = store.propose({"op": "add", "type": type, "content": content,
                          "metadata": {"name": name, "sensitivity": sensitivity}})
    if info.status == "pending":
        info = store.approve(info.id, actor="test")
    assert info.status == "applied", info.status
    assert info.memory_id is not None
    return int(info.memory_id)


@pytest.fixture
def mcp_store(cc_store_template: Path, tmp_path: Path) -> dict[str, Any]:
    """The Claude Code store with a public, a private and a secret memory, all of which a
    query for "linter" finds."""
    import shutil

    path = tmp_path / "mcp.db"
    shutil.copyfile(cc_store_template, path)
    with open_store(path) as s:
        ids = {"public": _add(s, "Always run the linter before committing code.",
                              "lint-first"),
               "private": _add(s, f"{PRIVATE_TEXT}; its linter config is custom.",
                               "home-lab", "private"),
               "secret": _add(s, f"{SECRET_TEXT}; the linter never sees it.", SECRET_NAME,
                              "secret", "reference")}
        session = s.sessions()[0].id
    return {"path": path, "ids": ids, "session": session}


def _cli(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lca_tui.cli", *args], capture_output=True,
                          text=True, timeout=120, **kw)


def _texts(result: Any) -> str:
    """Everything a tool result carries, as text (content and structured content)."""
    parts = [getattr(c, "text", "") for c in result.content]
    if result.structuredContent is not None:
        parts.append(json.dumps(result.structuredContent))
    return "\n".join(parts)


def _payload(result: Any) -> dict[str, Any]:
    assert not result.isError, _texts(result)
    data = result.structuredContent
    if data is not None and set(data) == {"result"}:
        data = data["result"]
    return data if data is not None else json.loads(result.content[0].text)


async def _call(cs: ClientSession, name: str, args: dict[str, Any]) -> Any:
    return await asyncio.wait_for(cs.call_tool(name, args, read_timeout_seconds=CALL_TIMEOUT),
                                  timeout=120)


async def _drive(cs: ClientSession, fx: dict[str, Any], seen: list[str]) -> dict[str, Any]:
    """List the tools, call every one with good and bad arguments; every result's text is
    appended to ``seen``. Returns what later checks need."""
    await asyncio.wait_for(cs.initialize(), timeout=120)
    listed = (await asyncio.wait_for(cs.list_tools(), timeout=60)).tools
    assert sorted(t.name for t in listed) == sorted(TOOLS)
    for tool in listed:
        assert not any(word in tool.name for word in FORBIDDEN), tool.name
        ann = tool.annotations
        assert ann is not None
        for hint, value in TOOLS[tool.name].items():
            assert getattr(ann, hint) is value, (tool.name, hint)
        assert tool.description and len(tool.description) > 60, tool.name
        assert tool.inputSchema["type"] == "object"
    ids, session = fx["ids"], fx["session"]

    async def good(name: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await _call(cs, name, args)
        seen.append(_texts(result))
        return _payload(result)

    async def bad(name: str, args: dict[str, Any], says: str) -> None:
        result = await _call(cs, name, args)
        text = _texts(result)
        # an error may repeat the id the agent gave; nothing else may name the secret
        seen.append(text.replace(f"memory:{ids['secret']}'", "(given)'")
                    .replace(f"no memory {ids['secret']}", "no memory (given)"))
        assert result.isError, (name, args, text)
        assert says in text, (name, text)
        assert "Traceback" not in text and 'File "' not in text, text

    recalled = await good("recall", {"query": "linter before committing"})
    assert recalled["trace_id"] > 0 and recalled["items"]
    pointers = [i["pointer"] for i in recalled["items"]]
    assert f"memory:{ids['public']}" in pointers
    await bad("recall", {"query": "   "}, "non-empty query")
    await bad("recall", {"query": "x", "channel": "nope"}, "channel must be one of")
    await bad("recall", {}, "query")  # a required argument left out

    found = await good("search", {"query": "linter", "limit": 20})
    assert any(h["pointer"] == f"memory:{ids['public']}" for h in found["hits"])
    assert all(len(h["snippet"]) <= 240 for h in found["hits"])
    await bad("search", {"query": "linter", "mode": "telepathy"}, "search mode must be")
    await bad("search", {"query": "linter", "limit": "many"}, "limit")
    await bad("search", {"query": "linter", "limit": 0}, "limit must be a whole number")

    entries = await good("get_entries", {"session": session, "seq": 3, "around": 1})
    assert [e["seq"] for e in entries["entries"]] == [2, 3, 4]
    await bad("get_entries", {"session": "no-such-session"}, "no session 'no-such-session'")
    await bad("get_entries", {"session": session, "limit": -3}, "limit must be")

    memory = await good("get_memory", {"id": ids["public"]})
    assert memory["body"].startswith("Always run the linter")
    await bad("get_memory", {"id": 99999}, "no memory 99999")
    await bad("get_memory", {"id": "seven"}, "id")

    listed_memories = await good("list_memories", {})
    names = [m["name"] for m in listed_memories["memories"]]
    assert "lint-first" in names and "home-lab" in names
    assert (await good("list_memories", {"tag": "no-such-tag"}))["memories"] == []
    await bad("list_memories", {"status": 5}, "status")

    proposed = await good("propose_memory", {
        "op": "add", "type": "feedback", "content": "Prefer pathlib over os.path in new code.",
        "metadata": {"name": "pathlib-first"}, "rationale": "the user asked twice"})
    assert proposed["status"] == "pending" and proposed["applied"] is False
    assert "person" in proposed["message"]
    assert {c["kind"] for c in proposed["checks"]} >= {"duplicate", "source_support"}
    # the walkthrough: a person approves it (the CLI here; the Proposals screen alike) and
    # the agent's next recall finds it
    shown = _cli("proposals", "--store", str(fx["path"]), "--status", "pending")
    assert "pathlib-first" in shown.stdout, shown.stdout + shown.stderr
    approved = _cli("approve", str(proposed["proposal_id"]), "--store", str(fx["path"]),
                    "--json")
    assert approved.returncode == 0, approved.stderr
    new_memory = json.loads(approved.stdout)["memory_id"]
    after = await good("recall", {"query": "prefer pathlib over os.path"})
    assert f"memory:{new_memory}" in [i["pointer"] for i in after["items"]]
    await bad("propose_memory", {"op": "forget", "content": "x"}, "must be one of")
    await bad("propose_memory", {"op": "add"}, "needs the memory's text")
    await bad("propose_memory", {"op": "revise", "content": "new text",
                                 "target": ids["secret"]}, f"no memory {ids['secret']}")

    first = next(i for i in recalled["items"] if i["pointer"] == f"memory:{ids['public']}")
    used = await good("report_use", {"trace_id": recalled["trace_id"],
                                     "item": first["pointer"], "kind": "used"})
    assert used["recorded"] is True and used["hits"] == 1
    again = await good("report_use", {"trace_id": recalled["trace_id"],
                                      "item": first["pointer"], "kind": "used"})
    assert again["recorded"] is False  # idempotent: counted once
    await bad("report_use", {"trace_id": recalled["trace_id"], "item": first["pointer"],
                             "kind": "loved"}, "kind must be 'used' or 'prevented'")
    await bad("report_use", {"trace_id": 99999, "item": "1"}, "trace 99999 has no injected")
    await bad("report_use", {"trace_id": recalled["trace_id"],
                             "item": f"memory:{ids['secret']}"}, "has no injected item")

    status = await good("context_status", {"session": session})
    assert status["session_id"] == session
    await bad("context_status", {"session": "no-such-session"}, "no session")

    health = await good("health", {})
    from store import SIGNAL_RANK  # the store's own order (its "n/a" ranks with "ok")

    order = [SIGNAL_RANK[s["status"]] for s in health["signals"]]
    assert order == sorted(order, reverse=True) and len(order) > 5
    await bad("health", {"verbose": {"deep": [1]}}, "verbose")  # an unknown argument
    return {"proposal_id": proposed["proposal_id"], "trace_id": recalled["trace_id"]}


def _no_secret(seen: list[str], fx: dict[str, Any]) -> None:
    every = "\n".join(seen)
    assert "zebra-banana-42" not in every
    assert SECRET_NAME not in every
    assert f"memory:{fx['ids']['secret']}" not in every


def _check_writes(fx: dict[str, Any], got: dict[str, Any]) -> None:
    out = _cli("proposals", "--store", str(fx["path"]), "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    rows = rows["proposals"] if isinstance(rows, dict) else rows
    mine = [r for r in rows if r["id"] == got["proposal_id"]]
    assert mine and mine[0]["status"] == "applied"  # approved during the walkthrough
    with open_store(fx["path"]) as s, s.read() as conn:
        who = conn.exec_driver_sql("SELECT writer, writer_version FROM proposal WHERE id = ?",
                                   (got["proposal_id"],)).one()
        trace = conn.exec_driver_sql("SELECT writer, writer_version FROM recall_trace "
                                     "WHERE id = ?", (got["trace_id"],)).one()
    assert tuple(who) == ("mcp:pytest-agent", "7.1.2")
    assert tuple(trace) == ("mcp:pytest-agent", "7.1.2")


async def test_stdio_every_tool(mcp_store: dict[str, Any]) -> None:
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "lca_tui.cli", "mcp", "--store", str(mcp_store["path"])], env=dict(os.environ))
    seen: list[str] = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, client_info=CLIENT,
                                 read_timeout_seconds=CALL_TIMEOUT) as cs:
            got = await _drive(cs, mcp_store, seen)
    _no_secret(seen, mcp_store)
    _check_writes(mcp_store, got)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_http_every_tool(mcp_store: dict[str, Any], tmp_path: Path) -> None:
    port = _free_port()
    log = (tmp_path / "server.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "lca_tui.cli", "mcp", "--store",
                             str(mcp_store["path"]), "--http", f"127.0.0.1:{port}"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, (tmp_path / "server.log").read_text()
                assert time.monotonic() < deadline, "the HTTP server did not start"
                await asyncio.sleep(0.1)
        seen: list[str] = []
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write, _):
            async with ClientSession(read, write, client_info=CLIENT,
                                     read_timeout_seconds=CALL_TIMEOUT) as cs:
                got = await _drive(cs, mcp_store, seen)
        _no_secret(seen, mcp_store)
        _check_writes(mcp_store, got)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.mark.parametrize("address", ["0.0.0.0:8765", "192.168.1.4:8765", "example.com:80"])
def test_http_refuses_a_non_loopback_host(address: str, tmp_path: Path) -> None:
    out = _cli("mcp", "--store", str(tmp_path / "s.db"), "--http", address)
    assert out.returncode == 2
    assert "not a loopback address" in out.stderr and "--allow-remote" in out.stderr
    assert "Traceback" not in out.stderr


def test_http_address_parsing() -> None:
    from lca_tui.commands.mcp import parse_http

    assert parse_http("127.0.0.1:8765", False) == ("127.0.0.1", 8765)
    assert parse_http("[::1]:9000", False) == ("::1", 9000)
    assert parse_http("localhost:1", False) == ("localhost", 1)
    assert parse_http("10.0.0.2:80", True) == ("10.0.0.2", 80)
    for wrong in ("127.0.0.1", "127.0.0.1:0", "127.0.0.1:99999", ":80", "127.0.0.1:x"):
        with pytest.raises(ValueError, match="HOST:PORT"):
            parse_http(wrong, False)


def test_public_channel_sees_no_private_record(mcp_store: dict[str, Any]) -> None:
    backend = Backend(str(mcp_store["path"]), [], "public", use_daemon=False)
    who = ("mcp:test", "1")
    try:
        listed = backend.run(who, list_memories_tool, None, None, None)
        assert [m["name"] for m in listed["memories"]] == ["lint-first"]
        hits = backend.run(who, search_tool, "linter", "hybrid", 50)["hits"]
        assert hits and all("quokka" not in h["snippet"] for h in hits)
        assert f"memory:{mcp_store['ids']['private']}" not in [h["pointer"] for h in hits]
        from lca_tui.mcp_server import ToolFailure

        private = mcp_store["ids"]["private"]
        with pytest.raises(ToolFailure) as hidden:
            backend.run(who, get_memory_tool, private)
        with pytest.raises(ToolFailure) as missing:
            backend.run(who, get_memory_tool, 99999)
        # the same answer as for a memory that does not exist, but for the number
        assert str(hidden.value).replace(str(private), "N") == \
            str(missing.value).replace("99999", "N")
        with pytest.raises(ToolFailure, match="narrow it"):
            backend.channel_for("private")
        assert backend.channel_for("public") == "public"
    finally:
        backend.close()
    shared = Backend(str(mcp_store["path"]), [], "shared", use_daemon=False)
    try:
        names = [m["name"] for m in shared.run(who, list_memories_tool, None, None,
                                                None)["memories"]]
        assert "home-lab" in names and SECRET_NAME not in names
    finally:
        shared.close()


def test_an_erasure_makes_the_server_let_go(mcp_store: dict[str, Any]) -> None:
    backend = Backend(str(mcp_store["path"]), [], "private", use_daemon=False)
    who = ("mcp:test", "1")
    target = mcp_store["ids"]["public"]
    try:
        assert backend.run(who, get_memory_tool, target)["id"] == target
        before = backend._store
        with open_store(mcp_store["path"]) as other:
            other.erase(memory=target, actor="test", reason="test")
        from lca_tui.mcp_server import ToolFailure

        with pytest.raises(ToolFailure, match=f"no memory {target}"):
            backend.run(who, get_memory_tool, target)
        assert backend._store is not before  # closed and opened again
    finally:
        backend.close()


# -- mcp install / uninstall ------------------------------------------------------------------
def _install(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, HOME=str(home), CODEX_HOME=str(home / ".codex"))
    return _cli("mcp", *args, env=env)


def test_claude_code_install_uninstall_is_byte_identical(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    user = home / ".claude.json"
    # Claude Code's own layout: other keys, other servers, no trailing newline, odd spacing
    original = (b'{"numStartups": 12,\n  "mcpServers": {"other": {"type": "stdio", '
                b'"command": "other-server", "args": []}},\n "projects": {}}')
    user.write_bytes(original)
    out = _install("install", "--client", "claude-code", "--store", str(tmp_path / "s.db"),
                   home=home)
    assert out.returncode == 0, out.stderr
    data = json.loads(user.read_text())
    ours = data["mcpServers"]["lca-tui"]
    assert ours["type"] == "stdio" and ours["args"][-3:] == ["mcp", "--store",
                                                             str(tmp_path / "s.db")]
    assert data["mcpServers"]["other"]["command"] == "other-server"
    assert data["numStartups"] == 12
    assert (home / ".claude.json.lca-tui.bak").read_bytes() == original
    again = _install("install", "--client", "claude-code", "--store", str(tmp_path / "s.db"),
                     home=home)
    assert "nothing to change" in again.stdout
    out = _install("uninstall", "--client", "claude-code", home=home)
    assert out.returncode == 0, out.stderr
    assert user.read_bytes() == original


def test_project_install_through_a_symlink_and_into_no_file(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    dotfiles = tmp_path / "dotfiles" / "mcp.json"
    dotfiles.parent.mkdir()
    dotfiles.write_bytes(b'{"mcpServers": {}}\n')
    (project / ".mcp.json").symlink_to(dotfiles)
    assert _install("install", "--client", "claude-code", "--project", str(project),
                    home=home).returncode == 0
    assert (project / ".mcp.json").is_symlink()
    assert "lca-tui" in json.loads(dotfiles.read_text())["mcpServers"]
    assert _install("uninstall", "--client", "claude-code", "--project", str(project),
                    home=home).returncode == 0
    assert (project / ".mcp.json").is_symlink()
    assert dotfiles.read_bytes() == b'{"mcpServers": {}}\n'
    # no file before: none after
    assert _install("install", "--client", "cursor", home=home).returncode == 0
    assert "lca-tui" in json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]
    assert _install("uninstall", "--client", "cursor", home=home).returncode == 0
    assert not (home / ".cursor" / "mcp.json").exists()


@pytest.mark.parametrize("client,path", [("gemini", ".gemini/settings.json"),
                                         ("codex", ".codex/config.toml")])
def test_gemini_and_codex_round_trip(client: str, path: str, tmp_path: Path) -> None:
    import tomllib

    home = tmp_path / "home"
    target = home / path
    target.parent.mkdir(parents=True)
    original = (b'model = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n' if client == "codex"
                else b'{"theme": "dark", "mcpServers": {"x": {"command": "x"}}}\n')
    target.write_bytes(original)
    assert _install("install", "--client", client, "--channel", "public",
                    home=home).returncode == 0
    text = target.read_text()
    if client == "codex":
        servers = tomllib.loads(text)["mcp_servers"]
        assert servers["other"] == {"command": "x"}
    else:
        servers = json.loads(text)["mcpServers"]
    assert servers["lca-tui"]["args"][-2:] == ["--channel", "public"]
    out = _install("uninstall", "--client", client, home=home)
    assert out.returncode == 0, out.stderr
    assert target.read_bytes() == original


def test_install_refuses_what_it_cannot_do_safely(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text('[mcp_servers.lca-tui]\ncommand = "mine"\n')
    out = _install("install", "--client", "codex", home=home)
    assert out.returncode == 2 and "did not write" in out.stderr
    (home / ".claude.json").write_text("{not json")
    out = _install("install", "--client", "claude-code", home=home)
    assert out.returncode == 2 and "not valid JSON" in out.stderr
    assert (home / ".claude.json").read_text() == "{not json"
    if sys.platform.startswith("linux"):
        out = _install("install", "--client", "claude-desktop", home=home)
        assert out.returncode == 2 and "macOS and Windows only" in out.stderr
    out = _install("install", "--client", "codex", "--project", str(tmp_path), home=home)
    assert out.returncode == 2 and "no per-project" in out.stderr


def test_a_hidden_session_is_as_none(mcp_store: dict[str, Any]) -> None:
    from lca_tui.mcp_server import ToolFailure, context_status_tool, get_entries_tool

    with open_store(mcp_store["path"]) as s:
        newest = s.sessions()[0].id
        s.mark("private", session=newest)
    who = ("mcp:test", "1")
    public = Backend(str(mcp_store["path"]), [], "public", use_daemon=False)
    private = Backend(str(mcp_store["path"]), [], "private", use_daemon=False)
    try:
        assert private.run(who, context_status_tool, None)["session_id"] == newest
        shown = public.run(who, context_status_tool, None)
        assert shown["session_id"] not in (None, newest)
        with pytest.raises(ToolFailure) as hidden:
            public.run(who, get_entries_tool, newest, None, 5, 50)
        with pytest.raises(ToolFailure) as unknown:
            public.run(who, get_entries_tool, "f" * len(newest), None, 5, 50)
        assert str(hidden.value).replace(newest, "S") == \
            str(unknown.value).replace("f" * len(newest), "S")
        with pytest.raises(ToolFailure, match="no session"):
            public.run(who, context_status_tool, newest)
    finally:
        public.close()
        private.close()


def test_a_store_that_cannot_be_used_is_one_clear_error(tmp_path: Path) -> None:
    from lca_tui.mcp_server import ToolFailure

    broken = tmp_path / "broken.db"
    broken.write_bytes(b"not a database at all " * 200)
    backend = Backend(str(broken), [], "private", use_daemon=False)
    try:
        with pytest.raises(ToolFailure, match="cannot be opened as an lca-tui store"):
            backend.run(("mcp:test", "1"), list_memories_tool, None, None, None)
    finally:
        backend.close()


@pytest.fixture
def hidden_store(mcp_store: dict[str, Any]) -> dict[str, Any]:
    """``mcp_store`` with a whole session secret (and the shortest prefix that names it
    alone) and one entry of the visible session secret."""
    with open_store(mcp_store["path"]) as s:
        ids = [i.id for i in s.sessions()]
        assert len(ids) >= 2
        hidden = next(i for i in ids if i != mcp_store["session"])
        s.mark("secret", session=hidden)
        prefix = next(hidden[:n] for n in range(1, len(hidden) + 1)
                      if not any(o.startswith(hidden[:n]) for o in ids if o != hidden))
        entry = next(e for e in s.entries(mcp_store["session"]) if e.seq == 3)
        s.mark("secret", entry=entry.id)
    return dict(mcp_store, hidden=hidden, prefix=prefix, hidden_seq=3)


async def _stdio(fx: dict[str, Any], calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "lca_tui.cli", "mcp", "--store", str(fx["path"])], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, client_info=CLIENT,
                                 read_timeout_seconds=CALL_TIMEOUT) as cs:
            await asyncio.wait_for(cs.initialize(), timeout=120)
            return [await _call(cs, name, args) for name, args in calls]


PIN = {"op": "add", "type": "feedback", "content": "Pin the linter's version."}


async def test_context_status_names_no_hidden_session(hidden_store: dict[str, Any]) -> None:
    """A one-character prefix of a secret session answers with the caller's string, as a
    session that does not exist does: its full id never leaves."""
    fx, never = hidden_store, "zzzz-no-such-session"
    hidden, missing = await _stdio(fx, [("context_status", {"session": fx["prefix"]}),
                                        ("context_status", {"session": never})])
    assert hidden.isError and missing.isError
    assert fx["hidden"] not in _texts(hidden)
    assert _texts(hidden).replace(fx["prefix"], "S") == _texts(missing).replace(never, "S")


async def test_evidence_seq_of_a_hidden_entry_is_as_missing(
        hidden_store: dict[str, Any]) -> None:
    """Evidence {session, seq} pointing at a secret entry of a visible session answers as a
    seq that does not exist (no check result may confirm guesses of its text)."""
    fx = hidden_store
    hidden, missing, shown = await _stdio(fx, [
        ("propose_memory", dict(PIN, evidence=[{"session": fx["session"],
                                                "seq": fx["hidden_seq"]}])),
        ("propose_memory", dict(PIN, evidence=[{"session": fx["session"], "seq": 99999}])),
        ("propose_memory", dict(PIN, evidence=[{"session": fx["session"], "seq": 2}]))])
    assert hidden.isError and missing.isError, _texts(hidden)
    assert _texts(hidden).replace(f"seq {fx['hidden_seq']}", "seq N") == \
        _texts(missing).replace("seq 99999", "seq N")
    assert _payload(shown)["status"] == "pending"  # a visible seq is evidence as before


async def test_duplicate_check_ignores_a_hidden_memory(hidden_store: dict[str, Any]) -> None:
    """The secret memory's exact text proposed: the duplicate check goes as if that memory
    did not exist (pass), and names it nowhere."""
    fx = hidden_store
    (guess,) = await _stdio(fx, [("propose_memory", {
        "op": "add", "type": "reference", "content": f"{SECRET_TEXT}; the linter never sees it.",
        "metadata": {"name": "guess"}})])
    checks = {c["kind"]: c for c in _payload(guess)["checks"]}
    assert checks["duplicate"]["result"] == "pass", checks["duplicate"]
    assert f"memory {fx['ids']['secret']}" not in json.dumps(checks)
    _no_secret([json.dumps(checks)], fx)


async def test_search_scores_ignore_hidden_hits(hidden_store: dict[str, Any]) -> None:
    """The secret memory matches the query best; the visible hits are scored as if it did
    not exist (the best visible one scores 1.0 by words), highest first."""
    fx = hidden_store
    (found,) = await _stdio(fx, [("search", {"query": "zebra-banana-42 linter", "mode": "fts",
                                             "limit": 5})])
    hits = _payload(found)["hits"]
    assert hits and f"memory:{fx['ids']['secret']}" not in [h["pointer"] for h in hits]
    assert max(h["score"] for h in hits) == 1.0
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


async def test_an_id_out_of_range_is_a_clear_error(hidden_store: dict[str, Any]) -> None:
    (memory,) = await _stdio(hidden_store, [("get_memory", {"id": 10**23})])
    assert memory.isError
    assert "a memory id must be a whole number from 0 to 9223372036854775807" in \
        _texts(memory), _texts(memory)


async def test_search_fills_its_limit_past_hidden_hits(mcp_store: dict[str, Any]) -> None:
    """Five secret memories outrank the one public match of the query: a search for one hit
    still returns the public one (the store is asked again for more), scored 1.0 by words."""
    with open_store(mcp_store["path"]) as s:
        for word in ("alpha", "beta", "gamma", "delta", "omega"):
            _add(s, f"quasar quasar quasar {word}", f"hidden-quasar-{word}", "secret",
                 "reference")
        public = _add(s, "One note mentions a quasar among many other words about the "
                         "telescope, the night and the weather.", "quasar-note")
    (found,) = await _stdio(mcp_store, [("search", {"query": "quasar", "mode": "fts",
                                                     "limit": 1})])
    hits = _payload(found)["hits"]
    assert [h["pointer"] for h in hits] == [f"memory:{public}"], hits
    assert hits[0]["score"] == 1.0
