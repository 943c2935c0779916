"""Hooks, the daemon and the MCP server on a store on a PostgreSQL server: a hook
run writes its entries to the server, the daemon serves a recall from it (and the in-process
fallback gives the same), an MCP client's tool calls work on it, and the daemon's socket is
named from the URL without its password. Also: a read-only session is read-only on the
server itself (a raw write through it is refused by PostgreSQL, not only by Python).

The server: the run's one server, conftest's ``pg`` fixture (``tests/pg_server.py``); each
test gets a database of its own. Skipped with one line when no server can be had."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from lca_tui.cli import main
from store import Settings, StoreError, mask_url, open_store
from store.harness import client, paths
from tests.conftest import needs_shared_data, with_user_config
from tests.helpers_harness import hook_payload, check_hook_output, run_hook, runtime_dir, serving  # noqa: F401
from tests.pg_server import PgServer

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install "
                              "'lca-tui[postgres]')")


@pytest.fixture
def pg_url(pg: PgServer) -> Iterator[str]:
    """A fresh, empty database on the run's server for one test (dropped after it)."""
    url = pg.create(kind="hs")
    yield url
    pg.drop(urlsplit(url).path.lstrip("/"))


def _entries(url: str) -> list[tuple[str, str]]:
    with open_store(url, Settings.load({"embed.backend": "fallback"})) as s, \
            s.read() as conn:
        return [(str(r[0]), str(r[1])) for r in conn.exec_driver_sql(
            "SELECT session_id, kind FROM entry ORDER BY session_id, seq").all()]


def _payload(tmp_path: Path, name: str = "short.jsonl") -> dict[str, str]:
    return hook_payload(tmp_path, name)


# -- naming a server store ------------------------------------------------------------------
@pytest.mark.parametrize("url", [
    "postgresql://agent:s3cret-pw@db.example:5433/lca",
    "postgresql://agent@db.example:5433/lca?sslmode=require&password=s3cret-pw",
    "postgres://agent:s3cret-pw@/lca?host=/run/postgresql",
    "postgresql+psycopg://agent:@localhost/lca",
])
def test_a_server_stores_daemon_is_named_without_its_password(url: str,
                                                              runtime_dir: Path) -> None:  # noqa: F811
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lca_tui"))
    try:
        import hook_fast  # the hook's fast path computes the same name by itself
    finally:
        sys.path.pop(0)
    identity = paths.server_identity(url)
    assert "s3cret" not in identity and hook_fast._server_identity(url) == identity
    assert hook_fast._store_path(url, os) == identity
    sock = paths.socket_path(paths.resolve_store(url))
    assert "s3cret" not in str(sock) and sock.parent.parent == runtime_dir
    # the same store without the password in the URL (PGPASSWORD, ~/.pgpass): one daemon
    without = identity
    assert paths.store_key(without) == paths.store_key(url)
    assert paths.socket_path(without) == sock
    # another database, another user: another daemon
    assert paths.store_key(url.replace("/lca", "/other")) != paths.store_key(url)
    assert paths.store_key(url.replace("agent", "reader")) != paths.store_key(url)
    assert paths.store_name(url) == mask_url(url) and "s3cret" not in paths.store_name(url)
    assert paths.resolve_store(f"  {url} ") == url  # kept as given, never made a path


def test_lca_store_and_the_store_url_setting_name_a_server_for_the_harness(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = "postgresql://agent@db.example/lca"
    monkeypatch.setenv("LCA_STORE", url)
    assert paths.resolve_store(None) == url
    monkeypatch.delenv("LCA_STORE")
    config = tmp_path / "xdg_config_home" / "lca-tui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)  # the test user's own config file
    config.write_text(with_user_config(f'[store]\nurl = "{url}"\n'))
    assert paths.resolve_store(None) == url
    assert paths.resolve_store(tmp_path / "x.db") == (tmp_path / "x.db").resolve()
    config.write_text(with_user_config(""))  # no store.url
    assert isinstance(paths.resolve_store(None), Path)


def test_a_url_with_a_password_is_never_written_into_a_clients_configuration(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = "postgresql://agent:s3cret-pw@db.example/lca"
    capsys.readouterr()
    assert main(["hooks", "install", "--project", str(tmp_path), "--store", url]) != 0
    err = capsys.readouterr().err
    assert "holds a password" in err and "s3cret" not in err
    assert not (tmp_path / ".claude" / "settings.json").exists()
    bare = "postgresql://agent@db.example/lca"
    assert main(["hooks", "install", "--project", str(tmp_path), "--store", bare]) == 0
    written = (tmp_path / ".claude" / "settings.json").read_text()
    assert f"--store {bare}" in written
    from store.harness.mcp_config import ConfigFileError, server_entry

    with pytest.raises(ConfigFileError, match="holds a password"):
        server_entry("claude-code", url)
    assert server_entry("claude-code", bare)["args"][-2:] == ["--store", bare]


# -- a hook run, the daemon, an MCP client -------------------------------------------------
@needs_shared_data
def test_a_hook_run_writes_its_entries_to_the_server_store(
        pg_url: str, tmp_path: Path, runtime_dir: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    base = _payload(tmp_path)
    out = run_hook("Stop", {**base, "hook_event_name": "Stop"}, pg_url, monkeypatch,
                   capsys)  # type: ignore[arg-type]
    assert out == ""
    on_server = _entries(pg_url)
    # what importing the same transcript into a file gives
    with open_store(tmp_path / "file.db", Settings.load({"embed.backend": "fallback"})) as f:
        f.ingest([tmp_path / "short.jsonl"])
        with f.read() as conn:
            in_file = [(str(r[0]), str(r[1])) for r in conn.exec_driver_sql(
                "SELECT session_id, kind FROM entry ORDER BY session_id, seq").all()]
    assert on_server and on_server == in_file
    with open_store(pg_url, Settings.load({"embed.backend": "fallback"})) as s, \
            s.read() as conn:
        runs = [tuple(r) for r in conn.exec_driver_sql(
            "SELECT event, status, via, entries_added FROM hook_run").all()]
    assert runs == [("Stop", "ok", "process", len(in_file))]
    # a repeat adds nothing; and no store file was made anywhere for it
    run_hook("Stop", {**base, "hook_event_name": "Stop"}, pg_url, monkeypatch,  # type: ignore[arg-type]
             capsys)
    assert _entries(pg_url) == on_server
    assert not (tmp_path / "env-store.db").exists()


@needs_shared_data
def test_the_daemon_serves_a_recall_from_the_server_store_as_in_process_does(
        pg_url: str, tmp_path: Path, runtime_dir: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    with serving(pg_url) as daemon:  # type: ignore[arg-type]
        assert daemon.store is not None and daemon.store.on_server
        assert daemon.sock == paths.socket_path(pg_url)
        status = client.running(daemon.sock)
        assert status is not None and status["store"] == mask_url(pg_url)
        # a hook through the daemon writes to the server
        base = _payload(tmp_path)
        out = run_hook("UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit",
                                            "prompt": "what did we change in the parser"},
                       pg_url, monkeypatch, capsys)  # type: ignore[arg-type]
        check_hook_output(out)
        assert daemon.counts["hooks"] == 1 and _entries(pg_url)
        capsys.readouterr()
        assert main(["recall", "what did we change", "--store", pg_url, "--json"]) == 0
        warm = json.loads(capsys.readouterr().out)
        assert daemon.counts["recalls"] == 1
        assert main(["recall", "what did we change", "--store", pg_url, "--set",
                     "embed.batch_size=8", "--json"]) == 0  # not per request: in-process
        cold = json.loads(capsys.readouterr().out)
        assert daemon.counts["recalls"] == 1  # this one ran here
    assert warm["candidates"] and cold["trace_id"] == warm["trace_id"] + 1
    assert [(c["source_id"], c["decision"]) for c in warm["candidates"]] == \
        [(c["source_id"], c["decision"]) for c in cold["candidates"]]
    with open_store(pg_url, Settings.load({"embed.backend": "fallback"})) as s, \
            s.read() as conn:
        via = [tuple(r) for r in conn.exec_driver_sql(
            "SELECT event, status, via FROM hook_run").all()]
    assert via == [("UserPromptSubmit", "ok", "daemon")]


def test_a_daemon_stops_when_its_database_is_replaced(pg: PgServer, runtime_dir: Path) -> None:  # noqa: F811
    url = pg.create(kind="hr")
    name = urlsplit(url).path.lstrip("/")
    try:
        with serving(url) as daemon:  # type: ignore[arg-type]
            assert daemon.store_gone() is None
            pg.drop(name)
            pg._admin(f'CREATE DATABASE "{name}" TEMPLATE template0')  # another store
            pg._made.append(name)
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("CREATE EXTENSION vector")
            daemon._identity_seen = 0.0  # look now, not IDENTITY_S from the last look
            gone = daemon.store_gone()
            assert gone and "replaced by another database" in gone
            assert "password" not in gone and mask_url(url) in gone
    finally:
        pg.drop(name)


CLIENT_NAME, CLIENT_VERSION = "pytest-agent", "7.1.2"


async def _mcp_calls(url: str) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.types import Implementation

    # the URL reaches the server in the environment, as a client configuration would give it
    params = StdioServerParameters(command=sys.executable, args=["-m", "lca_tui.cli", "mcp"],
                                   env=dict(os.environ, LCA_STORE=url, LCA_NO_DAEMON="1"))
    wait = timedelta(seconds=90)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=wait, client_info=(
                Implementation(name=CLIENT_NAME, version=CLIENT_VERSION))) as cs:
            await asyncio.wait_for(cs.initialize(), timeout=120)
            out = {}
            for name, args in (("recall", {"query": "always run the linter"}),
                               ("search", {"query": "linter", "limit": 5}),
                               ("propose_memory", {"op": "add", "type": "feedback",
                                                   "content": "Prefer pathlib in new code.",
                                                   "metadata": {"name": "pathlib-first"}})):
                result = await asyncio.wait_for(cs.call_tool(name, args,
                                                             read_timeout_seconds=wait), 120)
                assert not result.isError, result.content
                data = result.structuredContent
                out[name] = data.get("result", data) if data else json.loads(
                    result.content[0].text)
            return out


def test_an_mcp_clients_tool_calls_work_on_the_server_store(pg_url: str) -> None:
    with open_store(pg_url, Settings.load({"embed.backend": "fallback"})) as s:
        info = s.propose({"op": "add", "type": "feedback",
                          "content": "Always run the linter before committing code.",
                          "metadata": {"name": "lint-first"}})
        s.approve(info.id, actor="test")
    got = asyncio.run(_mcp_calls(pg_url))
    assert any(i["pointer"].startswith("memory:") for i in got["recall"]["items"])
    assert got["search"]["hits"]
    assert got["propose_memory"]["status"] == "pending"
    with open_store(pg_url, Settings.load({"embed.backend": "fallback"})) as s, \
            s.read() as conn:
        trace = conn.exec_driver_sql("SELECT writer, writer_version FROM recall_trace "
                                     "WHERE id = %s", (got["recall"]["trace_id"],)).one()
        proposal = conn.exec_driver_sql("SELECT status, writer FROM proposal WHERE id = %s",
                                        (got["propose_memory"]["proposal_id"],)).one()
    assert tuple(trace) == (f"mcp:{CLIENT_NAME}", CLIENT_VERSION)
    assert tuple(proposal) == ("pending", f"mcp:{CLIENT_NAME}")


# -- a read-only session ------------------------------------------------------------------
def test_a_read_only_session_is_read_only_on_the_server(pg_url: str) -> None:
    open_store(pg_url, Settings.load({"embed.backend": "fallback"})).close()  # the schema
    with open_store(pg_url, Settings.load({"embed.backend": "fallback"}),
                    read_only=True) as ro:
        with ro.read() as conn:  # a raw write, past every refusal of the Python side
            assert conn.exec_driver_sql("SHOW default_transaction_read_only").scalar() == "on"
            with pytest.raises(Exception) as refused:
                conn.exec_driver_sql("INSERT INTO session (id, created_at, writer, "
                                     "writer_version) VALUES ('x', 'now', 'w', '1')")
        assert "read-only transaction" in str(refused.value)
        assert getattr(refused.value.orig, "sqlstate", None) == "25006"  # type: ignore[attr-defined]
        with pytest.raises(StoreError):
            ro.write().__enter__()  # and the Python side refuses first, as on a file
        assert ro.stats(with_embedder=False).backend == "postgresql"  # reads work
        assert ro.search("linter", 5) is not None
    assert _entries(pg_url) == []  # nothing was written
