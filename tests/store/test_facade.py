"""The facade (``store.Store``) as the one door: every public method is typed (no ``Any`` in a
signature, a return type on each, checked by mypy against the capability's own signature),
``Store.record`` validates any context record document, ``Store.hook_runs`` reads hook runs
as records, and ``read`` / ``write`` raise the store's own errors instead of SQLAlchemy's."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from sqlmodel import Session as OrmSession

from store import AuditInfo, HookRunInfo, ReadOnly, Store, StoreError, StoreUnavailable
from store.facade import operation

ROOT = Path(__file__).resolve().parents[2]


def _public_methods() -> dict[str, object]:
    found: dict[str, object] = {}
    for klass in reversed(Store.__mro__[:-1]):
        for name, attr in vars(klass).items():
            if name.startswith("_"):
                continue
            if isinstance(attr, operation):
                found[name] = attr.resolve()
            elif isinstance(attr, staticmethod):
                found[name] = attr.__func__
            elif inspect.isfunction(attr):
                found[name] = attr
    return found


def test_every_public_method_is_typed_without_any() -> None:
    methods = _public_methods()
    assert len(methods) >= 60, sorted(methods)  # the whole facade, not a corner of it
    untyped = {n: str(inspect.signature(f)) for n, f in methods.items()  # type: ignore[arg-type]
               if "Any" in str(inspect.signature(f))  # type: ignore[arg-type]
               or inspect.signature(f).return_annotation is inspect.Signature.empty}  # type: ignore[arg-type]
    assert untyped == {}


def _type_checking_names(module_name: str) -> dict[str, object]:
    """The names a module imports under ``if TYPE_CHECKING:`` (its annotations use them)."""
    module = importlib.import_module(module_name)
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    names: dict[str, object] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and \
                node.test.id == "TYPE_CHECKING":
            block = ast.Module(body=node.body, type_ignores=[])
            exec(compile(block, str(module.__file__), "exec"), names)  # noqa: S102
    return names


def test_no_public_method_returns_an_untyped_mapping_or_object() -> None:
    """Each method's return type, resolved (``typing.get_type_hints``), is a record or a
    typed container: never ``object``, a bare ``dict`` or a ``dict[str, object]`` a caller
    can only index blindly."""
    loose = {}
    for name, f in _public_methods().items():
        module = importlib.import_module(f.__module__)  # type: ignore[attr-defined]
        namespace = {**vars(module), **_type_checking_names(f.__module__)}  # type: ignore[attr-defined]
        returned = typing.get_type_hints(f, globalns=namespace).get("return")
        args = typing.get_args(returned)
        if returned is object or returned is dict or typing.get_origin(returned) is dict \
                and object in args or typing.get_origin(returned) is list and any(
                    a is object or typing.get_origin(a) is dict and object in
                    typing.get_args(a) for a in args):
            loose[name] = str(returned)
    assert loose == {}


def test_mypy_checks_a_call_against_the_capabilitys_signature(tmp_path: Path) -> None:
    """``store.approve`` is the capability's ``approve``: a wrong argument is a type error,
    and the return type is the record's."""
    script = tmp_path / "harness_snippet.py"
    script.write_text("from store import open_store\n"
                      "s = open_store('x.db')\n"
                      "reveal_type(s.approve)\n"
                      "s.approve('not an id')\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "mypy", str(script)],
                         cwd=ROOT, capture_output=True, text=True)
    assert "ProposalInfo" in out.stdout, out.stdout
    assert 'Argument 1 has incompatible type "str"; expected "int"' in out.stdout, out.stdout


def test_record_says_in_one_line_what_is_wrong(store: Store) -> None:
    """Not an object, or a record without its required fields: one line naming it, nothing
    written (no Python internals such as "dictionary update sequence" or "positional")."""
    with pytest.raises(ValueError, match="^a context record is a JSON object, got str$"):
        store.record("str")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="^a prune record needs tokens_before, tokens_after$"):
        store.record({"type": "prune", "session_id": "s-missing"})
    assert [k.session_id for k in store.series_keys()] == []
    assert [s.id for s in store.sessions()] == []


def test_record_validates_and_records_each_kind(store: Store) -> None:
    kind, sid, created = store.record({"session_id": "s1", "used_tokens": 1000,
                                       "window_tokens": 10_000, "checkpoint_percent": 80})
    assert (kind, created) == ("snapshot", "s1") and sid > 0
    series = store.series("s1")
    assert series.snapshots[-1].used_tokens == 1000
    assert series.snapshots[-1].checkpoint_threshold == 8000
    assert store.record({"type": "checkpoint", "session_id": None})[0] == "checkpoint"
    before = len(store.series("s1").snapshots)
    with pytest.raises(ValueError, match="unknown field.*colour"):
        store.record({"session_id": "s1", "used_tokens": 5, "colour": "red"})
    with pytest.raises(ValueError, match="type must be one of"):
        store.record({"type": "weather", "session_id": "s1"})
    with pytest.raises(ValueError, match="session_id is required"):
        store.record({"used_tokens": 5})
    assert len(store.series("s1").snapshots) == before  # nothing written by the refusals


def test_hook_runs_are_records_newest_first(store: Store) -> None:
    from store.harness.models import HookRun

    with store.write() as conn, OrmSession(bind=conn) as s:
        for i, status in enumerate(("ok", "failed")):
            s.add(HookRun(ts=f"2026-01-0{i + 1}T00:00:00.000Z", event="Stop", status=status,
                          via="daemon", duration_ms=12.5, entries_added=i, injected=0,
                          error="boom" if status == "failed" else None, writer="t",
                          created_at="2026-01-01T00:00:00.000Z",
                          writer_version="1"))
        s.commit()
    runs = store.hook_runs()
    assert [type(r) for r in runs] == [HookRunInfo, HookRunInfo]
    assert [(r.status, r.entries_added, r.error) for r in runs] == [("failed", 1, "boom"),
                                                                     ("ok", 0, None)]
    assert store.hook_runs(limit=1)[0].status == "failed"


def test_read_and_write_raise_the_stores_own_error(store: Store) -> None:
    with pytest.raises(StoreUnavailable, match="no such table: nowhere") as raised:
        with store.read() as conn:
            conn.exec_driver_sql("SELECT * FROM nowhere")
    assert isinstance(raised.value, StoreError)
    with pytest.raises(StoreUnavailable, match="no such table: nowhere"):
        with store.write() as conn:
            conn.exec_driver_sql("DELETE FROM nowhere")


def test_audit_records_an_event_without_a_connection_and_returns_it(store: Store) -> None:
    """``Store.audit`` takes no connection (it opens its own transaction) and hands back the
    stored event as an ``AuditInfo``, the same record ``audit_events`` reads; ``audit`` is
    refused by name on a read-only store."""
    event = store.audit("harness-note", "session", ["s1", 7], {"entries": 3}, actor="ci")
    assert isinstance(event, AuditInfo)
    assert store.audit_events(limit=1) == [event]
    assert (event.action, event.target_kind, event.target_ids, event.counts, event.actor) == \
        ("harness-note", "session", ("s1", 7), {"entries": 3}, "ci")
    assert "conn" not in inspect.signature(Store.audit).parameters
    ro = Store(store.path, read_only=True, embedder=store.embedder)
    try:
        with pytest.raises(ReadOnly, match="recording an audit event"):
            ro.audit("harness-note")
    finally:
        ro.close()
    assert len(store.audit_events(action="harness-note")) == 1


def test_one_health_signal_is_measured_without_a_scan_stored(store: Store) -> None:
    """``Store.health_signal`` measures one signal as the scan does (``hooks status`` shows
    ``hook_failures`` so) and stores no scan; an unknown name is refused naming the signals."""
    from store import SignalResult

    found = store.health_signal("hook_failures")
    assert isinstance(found, SignalResult) and found.name == "hook_failures"
    assert (found.status, found.value) == ("ok", 0.0)
    assert store.health_trends() == {}  # no scan stored
    assert found == store.health(save="never").signal("hook_failures")
    with pytest.raises(ValueError, match="no health signal 'nope': one of"):
        store.health_signal("nope")
