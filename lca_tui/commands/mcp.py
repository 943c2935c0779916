"""``lca-tui mcp``: the store as an MCP server (stdio, or ``--http HOST:PORT``), and
``lca-tui mcp install|uninstall --client …``: that server in a client's MCP configuration
(``store.harness.mcp_config``). The tools are in ``lca_tui.mcp_server``."""

from __future__ import annotations

import argparse
import ipaddress
import sys


from lca_tui.output import add_json_flag, print_file_plan, print_json

CLIENTS = ("claude-code", "claude-desktop", "cursor", "codex", "gemini")


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("mcp", parents=parents,
                       help="serve the store to any agent over MCP (stdio or --http); "
                       "install / uninstall it in a client's configuration",
                       description="An MCP server (Model Context Protocol) on stdio: recall, "
                       "search, get_entries, get_memory, list_memories, propose_memory, "
                       "report_use, context_status, health. No tool approves, rejects, "
                       "erases or reveals a secret. See docs/mcp.md.")
    p.add_argument("--http", metavar="HOST:PORT",
                   help="serve streamable HTTP on HOST:PORT (at /mcp) instead of stdio; a "
                   "loopback host only, unless --allow-remote")
    p.add_argument("--allow-remote", action="store_true",
                   help="with --http: allow a host that is not loopback (anyone who reaches "
                   "it reads the store; there is no authentication)")
    p.add_argument("--channel", choices=("private", "shared", "public"), default="private",
                   help="this client's channel: what it may see follows recall's channel "
                   "rule (default private: all but secret; public: no private either)")
    p.add_argument("--no-daemon", action="store_true",
                   help="never ask the warm daemon; recall in this process")
    p.set_defaults(func=run_server, verb=None)
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    for verb, text in (("install", "add lca-tui's MCP server to a client's configuration "
                                   "(a backup first; other servers untouched)"),
                       ("uninstall", "remove it again (the file restored byte for byte when "
                                     "nothing else changed)")):
        v = verbs.add_parser(verb, parents=parents, help=text, description=text)
        v.add_argument("--client", choices=CLIENTS, required=True)
        v.add_argument("--project", metavar="DIR",
                       help="claude-code / cursor / gemini: the project's configuration "
                       "(.mcp.json, .cursor/mcp.json, .gemini/settings.json) rather than the "
                       "user's")
        v.add_argument("--channel", choices=("private", "shared", "public"),
                       default="private", help="the channel the client is put on")
        v.add_argument("--dry-run", action="store_true",
                       help="show what would change and write nothing")
        add_json_flag(v)
        v.set_defaults(func=run_install)


def parse_http(value: str, allow_remote: bool) -> tuple[str, int]:
    """(host, port) from ``HOST:PORT`` (``[::1]:PORT`` for IPv6); a host that is not
    loopback is refused unless ``allow_remote``."""
    host, sep, port_text = value.rpartition(":")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"--http {value!r}: give HOST:PORT, e.g. 127.0.0.1:8765")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    loopback = host == "localhost"
    if not loopback:
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
    if not loopback and not allow_remote:
        raise ValueError(f"--http {value!r}: {host} is not a loopback address; the server has "
                         "no authentication, so it serves 127.0.0.1 / ::1 / localhost only "
                         "(--allow-remote to serve another address anyway)")
    return host, int(port_text)


def run_server(args: argparse.Namespace) -> int:
    from lca_tui.mcp_server import Backend, build_server

    overrides = [*(getattr(args, "overrides_top", None) or []),
                 *(getattr(args, "overrides", None) or [])]
    if args.allow_remote and not args.http:
        raise ValueError("--allow-remote goes with --http HOST:PORT")
    address = parse_http(args.http, args.allow_remote) if args.http else None
    from store import Settings, parse_assignment

    Settings.load(dict(parse_assignment(a) for a in overrides))  # a bad --set: said now
    backend = Backend(getattr(args, "store", None), overrides, args.channel,
                      use_daemon=not args.no_daemon)
    try:
        if address is None:
            build_server(backend).run("stdio")
        else:
            host, port = address
            server = build_server(backend, host, port)
            if host not in ("127.0.0.1", "localhost", "::1"):  # the SDK guards these only
                from mcp.server.transport_security import TransportSecuritySettings

                server.settings.transport_security = TransportSecuritySettings(
                    enable_dns_rebinding_protection=False)
            print(f"lca-tui mcp: serving http://{'[' + host + ']' if ':' in host else host}"
                  f":{port}/mcp", file=sys.stderr, flush=True)
            server.run("streamable-http")
    except KeyboardInterrupt:
        return 0
    finally:
        backend.close()
    return 0


def run_install(args: argparse.Namespace) -> int:
    from store import (
        McpConfigError,
        apply_mcp_plan,
        mcp_config_path,
        mcp_server_entry,
        plan_mcp_install,
        plan_mcp_uninstall,
    )

    try:
        path = mcp_config_path(args.client, args.project)
        entry = mcp_server_entry(args.client, getattr(args, "store", None), args.channel)
        plan = (plan_mcp_install(path, args.client, entry) if args.verb == "install"
                else plan_mcp_uninstall(path, args.client))
    except McpConfigError as exc:
        raise ValueError(str(exc)) from exc
    written = [] if args.dry_run else apply_mcp_plan(plan)
    if args.json:
        print_json({**plan.to_json(), "dry_run": args.dry_run,
                    "written": [str(p) for p in written]})
        return 0
    print_file_plan(plan, path, written, args.dry_run,
                    "lca-tui's MCP server is configured" if args.verb == "install"
                    else "no lca-tui MCP server")
    return 0


