"""Raw SQL is the exception: every ``text(...)`` or ``.exec_driver_sql(...)`` call under
``store/`` outside ``store/core/vec.py`` (sqlite-vec / FTS5) and ``store/core/migrations/``
carries a ``# raw SQL: <reason>`` comment on its line or within the three lines above it (a
measured hot path with its figure, a PRAGMA or connection control, a table discovered at run
time that no model describes, a SQLite virtual table, ``json_each`` over a list of ids, ...).
Everything else goes through the SQLModel classes."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARK = "raw SQL:"
ALLOWED = ("store/core/vec.py", "store/core/pragmas.py", "store/core/migrations/")


def raw_sql_calls(root: Path) -> list[tuple[str, int, str]]:
    """(file, line, the reason or "") for every raw SQL call under ``root/store``."""
    found = []
    for path in sorted((root / "store").rglob("*.py")):
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
                                and f.attr == "text")))
            if not raw:
                continue
            window = lines[max(0, node.lineno - 4):node.lineno]
            reason = next((ln.split(MARK, 1)[1].strip() for ln in reversed(window)
                           if MARK in ln), "")
            found.append((rel, node.lineno, reason))
    return found


def test_every_raw_sql_call_gives_its_reason() -> None:
    missing = [(f, n) for f, n, reason in raw_sql_calls(ROOT) if not reason]
    assert missing == [], "raw SQL without a '# raw SQL: <reason>' comment"


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
