"""Raw SQL is the exception, and only the store holds it: no ``text(...)``,
``.exec_driver_sql(...)`` or DB-API ``.execute("…")`` (SQL as a string) call anywhere in
``lca_tui/``, ``screens/`` or ``widgets/`` (they go through ``Store``), and every such call
under ``store/`` outside ``store/core/vec.py`` (sqlite-vec / FTS5), ``store/core/db.py`` (the
engine's connection setup: its PRAGMAs on connect, the WAL checkpoint, VACUUM, the schema
version read without the engine), ``store/core/migrations/``, and the listing commands' reads
without the ORM (``store/core/lite.py``, ``store/governance/lite.py``: importing SQLAlchemy,
SQLModel and pydantic is most of a 0.9 s ``lca-tui stats``; their answers are held equal to
the ORM reads' by ``tests/store/test_lite_reads.py``) carries a ``# raw SQL:
<reason>`` comment on its line or within the three lines above it (a measured hot path with
its figure, a PRAGMA or connection control, a SQLite virtual table such as ``dbstat``, ...).
``store/core/pragmas.py`` holds SQLite's schema statements (``sqlite_master``, ``table_info``,
``foreign_key_list``, ``foreign_key_check``) behind named functions. Everything else goes
through the SQLModel classes (tables known only at run time through Core handles,
``store.privacy.tables.rel``).

Each call gives its own reason: no two calls share one word for word (a label pasted over a
module is no reason), none points elsewhere ("see above") or says it is merely not converted.
And the count of raw calls has a ceiling (``CEILING``): lower it when a call goes; it may not
grow silently."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARK = "raw SQL:"
ALLOWED = ("store/core/vec.py", "store/core/pragmas.py", "store/core/migrations/",
           "store/core/pg.py", "store/core/db.py", "store/core/lite.py",
           "store/governance/lite.py")
# Raw calls left outside ALLOWED (store/bench.py 3 — one a DB-API PRAGMA wal_checkpoint,
# core/base.py 1 — PRAGMA data_version on its watch connection, demo.py 1, harness/bench.py 1,
# harness/hook.py 2, recall/pool.py 2, recall/run.py 3 — the third, adjacent support's
# neighbour lookup, measured: 0.22 ms vs +22 ms a recall as Core).
CEILING = 13
NOT_A_REASON = ("see above", "see below", "as above", "not yet converted", "todo")


OUTSIDE = ("lca_tui", "screens", "widgets")


def dbapi_sql(node: ast.Call) -> bool:
    """``cursor.execute("PRAGMA …")``: SQL handed to the DB-API (a sqlite3 cursor or
    connection) as a string, past SQLAlchemy as surely as ``exec_driver_sql``."""
    f = node.func
    return isinstance(f, ast.Attribute) and f.attr in ("execute", "executemany",
                                                       "executescript") \
        and bool(node.args) and (isinstance(node.args[0], ast.JoinedStr) or (
            isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)))


def raw_sql_calls(root: Path, package: str = "store") -> list[tuple[str, int, str]]:
    """(file, line, the reason or "") for every raw SQL call under ``root/package``."""
    found = []
    for path in sorted((root / package).rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if any(rel == a or (a.endswith("/") and rel.startswith(a)) for a in ALLOWED):
            continue
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            raw = ((isinstance(f, ast.Name) and f.id == "text")
                   or (isinstance(f, ast.Attribute) and f.attr in ("exec_driver_sql", "text")
                       and not (isinstance(f.value, ast.Name) and f.value.id != "sa"
                                and f.attr == "text"))
                   or dbapi_sql(node))
            if not raw:
                continue
            window = lines[max(0, node.lineno - 4):node.lineno]
            reason = next((ln.split(MARK, 1)[1].strip() for ln in reversed(window)
                           if MARK in ln), "")
            found.append((rel, node.lineno, reason))
    return found


def test_no_raw_sql_outside_the_store() -> None:
    assert [c for pkg in OUTSIDE for c in raw_sql_calls(ROOT, pkg)] == [], \
        "the CLI, the screens and the widgets go through Store, never raw SQL"


def test_raw_sql_outside_the_store_is_caught(tmp_path: Path) -> None:
    pkg = tmp_path / "lca_tui"
    pkg.mkdir()
    (pkg / "stress.py").write_text(
        "def count(conn):\n"
        "    # raw SQL: a reason does not make it allowed here\n"
        "    return conn.exec_driver_sql('SELECT COUNT(*) FROM entry').scalar_one()\n",
        encoding="utf-8")
    assert [(f, n) for f, n, _ in raw_sql_calls(tmp_path, "lca_tui")] == [("lca_tui/stress.py", 3)]


def test_every_raw_sql_call_gives_its_reason() -> None:
    missing = [(f, n) for f, n, reason in raw_sql_calls(ROOT) if not reason]
    assert missing == [], "raw SQL without a '# raw SQL: <reason>' comment"


def bad_reasons(found: list[tuple[str, int, str]]) -> list[tuple[str, int, str]]:
    """Calls whose reason is shared word for word with another call, or is no reason."""
    seen: dict[str, int] = {}
    for _f, _n, reason in found:
        seen[reason] = seen.get(reason, 0) + 1
    return [(f, n, reason) for f, n, reason in found if reason and (
        seen[reason] > 1 or any(reason.lower().startswith(x) or x in reason.lower()
                                for x in NOT_A_REASON))]


def test_every_raw_sql_call_has_its_own_reason() -> None:
    assert bad_reasons(raw_sql_calls(ROOT)) == [], \
        "each raw SQL call says its own reason (no bulk label, no 'see above')"


def test_raw_sql_calls_stay_under_the_ceiling() -> None:
    found = raw_sql_calls(ROOT)
    assert len(found) <= CEILING, (
        f"{len(found)} raw SQL calls outside vec.py / pragmas.py / migrations (ceiling "
        f"{CEILING}): write the new one through the models")


def test_the_reason_guard_catches_bulk_labels() -> None:
    found = [("a.py", 1, "hot path, 1 ms vs 3 ms"), ("a.py", 9, "no model"),
             ("b.py", 4, "no model"), ("b.py", 8, "see above (same)"),
             ("c.py", 2, "not yet converted")]
    assert bad_reasons(found) == [("a.py", 9, "no model"), ("b.py", 4, "no model"),
                                  ("b.py", 8, "see above (same)"),
                                  ("c.py", 2, "not yet converted")]


def test_the_guard_catches_an_unexplained_call(tmp_path: Path) -> None:
    pkg = tmp_path / "store" / "x"
    pkg.mkdir(parents=True)
    (tmp_path / "store" / "core" / "migrations").mkdir(parents=True)
    (tmp_path / "store" / "core" / "migrations" / "m1.py").write_text("text('CREATE')\n")
    (pkg / "a.py").write_text(
        "from sqlalchemy import text\n"
        "def f(conn):\n"
        "    conn.execute(text('SELECT 1'))\n"
        "    # raw SQL: PRAGMA, no model\n"
        "    conn.exec_driver_sql('PRAGMA x')\n"
        "    conn.exec_driver_sql(\n"
        "        'PRAGMA y')\n", encoding="utf-8")
    found = sorted(raw_sql_calls(tmp_path))
    assert found == [("store/x/a.py", 3, ""), ("store/x/a.py", 5, "PRAGMA, no model"),
                     ("store/x/a.py", 6, "PRAGMA, no model")]


def test_the_guard_catches_sql_handed_to_the_dbapi(tmp_path: Path) -> None:
    """A sqlite3 cursor's ``execute("PRAGMA …")`` (or an f-string) is raw SQL too; an
    ``execute`` of a statement object is not."""
    pkg = tmp_path / "store" / "x"
    pkg.mkdir(parents=True)
    (pkg / "a.py").write_text(
        "def f(cur, conn, stmt, n):\n"
        "    cur.execute('PRAGMA data_version')\n"
        "    cur.execute(f'PRAGMA busy_timeout = {n}')\n"
        "    conn.execute(stmt)\n", encoding="utf-8")
    assert [n for _, n, _ in raw_sql_calls(tmp_path)] == [2, 3]
