"""Play one conformance case on a scratch store and check what it expects.

A case (``assets/conformance/cases/*.json``) has:

- ``state``: ``memories`` (files written to a scratch memory directory and imported — their
  front matter carries authority, sensitivity, validity, status, supersession, hits) and
  ``sessions`` (entries appended through ``Store.append_entries``); ``settings`` for the
  scratch store (``memory.dir: "@memdir"`` binds the scratch memory directory);
- ``channel`` and ``principal``: the channel recalls run in unless an op names another, and
  who acts (the ``actor`` of decisions unless an op names another);
- ``ops``: ``recall`` / ``probe`` / ``feedback`` / ``propose`` / ``approve`` / ``reject`` /
  ``edit`` / ``consolidate`` / ``erase`` / ``mark`` / ``export`` / ``search`` / ``append`` /
  ``write_file`` / ``reindex`` / ``warm_cache``, each through the public ``Store`` API; an op
  with ``raises`` must fail with an error holding that text (and change nothing it checks);
- ``expect``: checks on what the ops returned and the store afterwards;
- ``final``: the final-state digest — a named projection of only what the invariant is about
  (``memories`` with the listed fields, ``proposals``, ``items:<recall>``, ``residue``), its
  expected value and that value's sha256; the runner computes the projection and compares.

References in ops and checks: ``@memory:NAME`` (a memory's id, by name), ``@entry:KEY``,
``@session:KEY``, ``@proposal:AS`` (the id of the proposal an op stored ``as``), ``@memdir``.

The store is always a scratch one in a temporary directory (never the user's), opened with the
deterministic fallback embedder and no user configuration file.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from sqlmodel import col, select

from store.conformance.bundle import Bundle, canonical, load_bundle, sha256
from store.core.settings import Settings

DECISIONS = {"injected", "below_floor", "not_selected", "over_budget", "duplicate",
             "policy_filtered", "superseded"}
TS = "2026-06-01T09:00:00Z"
_TEMPLATE_LOCK = threading.Lock()
_TEMPLATE: dict[str, Path] = {}


class CaseFailure(Exception):
    """A check that did not hold; the message says which and why."""


@dataclass
class CaseResult:
    id: str
    family: str
    invariant: str
    title: str
    status: str  # pass | fail | not_applicable
    reasons: list[str] = field(default_factory=list)
    checks: int = 0
    digest: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "family": self.family, "invariant": self.invariant,
                "title": self.title, "status": self.status, "reasons": self.reasons,
                "checks": self.checks, "final_digest": self.digest}


@dataclass
class SuiteResult:
    contract: str
    version: str
    digest: str
    cases: list[CaseResult]

    @property
    def failed(self) -> list[CaseResult]:
        return [c for c in self.cases if c.status == "fail"]

    def by_family(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for c in self.cases:
            row = out.setdefault(c.family, {"pass": 0, "fail": 0, "not_applicable": 0})
            row[c.status] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {"contract": self.contract, "bundle_version": self.version,
                "manifest_sha256": self.digest, "cases": [c.to_json() for c in self.cases],
                "families": self.by_family(),
                "passed": sum(c.status == "pass" for c in self.cases),
                "failed": len(self.failed),
                "not_applicable": sum(c.status == "not_applicable" for c in self.cases)}


def run_bundle(bundle: Bundle | None = None, family: str | None = None,
               case: str | None = None) -> SuiteResult:
    bundle = bundle or load_bundle()
    results = [run_case(c) for c in bundle.select(family, case)]
    return SuiteResult(bundle.contract, bundle.version, bundle.digest, results)


def run_case(case: dict[str, Any]) -> CaseResult:
    result = CaseResult(case["id"], case["family"], case["invariant"], case["title"], "pass")
    if "not_applicable" in case:
        result.status = "not_applicable"
        result.reasons = [case["not_applicable"]]
        return result
    with tempfile.TemporaryDirectory(prefix="lca-conformance-", dir=scratch_root()) as tmp:
        play = _Play(case, Path(tmp))
        try:
            play.setup()
            for i, op in enumerate(case["ops"]):
                play.op(i, op)
            for check in case["expect"]:
                try:
                    play.check(check)
                except CaseFailure as exc:
                    result.reasons.append(str(exc))
                result.checks += 1
            if case.get("final"):
                result.checks += 1
                try:
                    result.digest = play.final(case["final"])
                except CaseFailure as exc:
                    result.reasons.append(str(exc))
        except CaseFailure as exc:
            result.reasons.append(str(exc))
        except Exception as exc:  # a case must never crash the suite: it fails, named
            result.reasons.append(f"unexpected {type(exc).__name__}: {exc}"[:400])
        finally:
            play.close()
    if result.reasons:
        result.status = "fail"
    return result


def scratch_root() -> str | None:
    """Where scratch stores go: memory-backed ``/dev/shm`` when the system has a writable one
    (a case is a few small files, written and erased; a third faster there), else the
    temporary directory."""
    import os

    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


def _template(settings_key: str) -> Path:
    """An empty, migrated store file, made once per process (opening one costs ~0.25 s)."""
    with _TEMPLATE_LOCK:
        path = _TEMPLATE.get(settings_key)
        if path is None or not path.is_file():
            from store.facade import open_store

            folder = Path(tempfile.mkdtemp(prefix="lca-conformance-template-",
                                           dir=scratch_root()))
            path = folder / "template.db"
            import atexit

            atexit.register(shutil.rmtree, folder, True)
            s = open_store(path, _settings(folder, {}))
            s.close()
            for extra in (path.with_name(path.name + "-wal"),
                          path.with_name(path.name + "-shm")):
                extra.unlink(missing_ok=True)
            _TEMPLATE[settings_key] = path
        return path


def _settings(folder: Path, values: dict[str, Any]) -> Settings:
    # the scratch store reads no user configuration file: a path that does not exist
    return Settings.load({**values, "embed.backend": "fallback"},
                         path=folder / "no-config.toml")


# Each check's keys: (what it selects by, what it asserts: at least one of them must be given;
# an empty second set: the check always asserts). A key outside both is refused, so a typo
# cannot turn a check into one that asserts nothing.
CHECK_KEYS: dict[str, tuple[set[str], set[str]]] = {
    "items": ({"recall"}, {"include", "exclude", "count", "first"}),
    "decision": ({"recall", "source"}, {"decision", "masked", "reason_has", "terms"}),
    "term_order": ({"recall", "high", "low", "term"}, set()),
    "not_candidate": ({"recall", "source"}, set()),
    "candidate": ({"recall", "source"}, set()),
    "chain": ({"of", "ids", "erased_between", "integrity"}, set()),
    "absent": ({"where", "text", "also"}, set()),
    "present": ({"where", "text"}, set()),
    "memory": ({"source"}, {"exists", "fields"}),
    "proposal": ({"proposal"}, {"status", "decided_by", "op", "type", "origin"}),
    "count": ({"what"}, {"equals", "max", "min"}),
    "erasure": ({"erase", "probes", "rows_at_least"}, set()),
    "budget": ({"recall", "decisions", "min_candidates"}, set()),
    "provenance": ({"sources", "person_text_counts"}, set()),
    "same_view": ({"recalls"}, set()),
    "entry": ({"source"}, {"fields"}),
    "audit": ({"action", "actor"}, set()),
}


class _Play:
    def __init__(self, case: dict[str, Any], tmp: Path) -> None:
        self.case = case
        self.tmp = tmp
        self.memdir = tmp / "memory"
        self.refs: dict[str, Any] = {"memdir": str(self.memdir)}
        self.results: dict[str, Any] = {}
        self.views: dict[str, str] = {}
        self.store: Any = None
        self.erased_chunks: dict[str, set[int]] = {}  # erase op → chunk ids it removed
        self.needle = ""  # the text an ``absent`` / ``present`` check is probing for
        self.channel = case.get("channel", "private")
        self.principal = case.get("principal", "dana")

    # -- setup --------------------------------------------------------------------------
    def setup(self) -> None:
        from store.facade import open_store

        values = {k: (str(self.memdir) if v == "@memdir" else v)
                  for k, v in (self.case.get("settings") or {}).items()}
        path = self.tmp / "store.db"
        shutil.copyfile(_template("default"), path)
        self.store = open_store(path, _settings(self.tmp, values))
        state = self.case.get("state") or {}
        mems = state.get("memories") or []
        if mems:
            self.memdir.mkdir(parents=True, exist_ok=True)
            (self.memdir / "MEMORY.md").write_text("# index\n", encoding="utf-8")
            for m in mems:
                self._memory_file(m)
            report = self.store.ingest([self.memdir])
            if report.errors:
                raise CaseFailure(f"setup: importing the memories: {report.errors[0]}")
        for sess in state.get("sessions") or []:
            self._append(sess["key"], sess.get("entries") or [], sess.get("project"),
                         sess.get("sensitivity"))
        self._refresh()

    def _memory_file(self, m: dict[str, Any]) -> None:
        front = {k: v for k, v in m.items() if k not in ("body", "file")}
        front.setdefault("type", "reference")
        front.setdefault("created", "2026-05-30")
        name = m.get("file") or f"{front['type']}_{_slug(front['name'])}.md"
        (self.memdir / name).write_text(
            "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n" + m["body"] + "\n",
            encoding="utf-8")

    def _append(self, key: str, entries: list[dict[str, Any]], project: str | None,
                sensitivity: str | None = None) -> None:
        from store.core.writes import NewEntry, NewSession

        before = len(self.store.entries(key)) if self.refs.get(f"session:{key}") else 0
        session = NewSession(id=key, format="conformance", project=project, started_at=TS)
        self.store.append_entries(session, [
            NewEntry(e["kind"], e["text"], source_key=key, source_offset=before + i,
                     ts=e.get("ts", TS), tool_name=e.get("tool_name"),
                     agent=e.get("agent", "main"))
            for i, e in enumerate(entries)])
        self.refs[f"session:{key}"] = key
        stored = self.store.entries(key)
        for e, row in zip(entries, stored[before:], strict=False):
            if e.get("key"):
                self.refs[f"entry:{e['key']}"] = int(row.id)
        if sensitivity:
            self.store.mark(sensitivity, session=key)

    def _refresh(self) -> None:
        from store.core.models import Memory

        with self.store.read() as conn:
            rows = conn.execute(select(Memory.id, Memory.name)).all()
        for mid, name in rows:
            self.refs[f"memory:{name}"] = int(mid)

    def close(self) -> None:
        if self.store is not None:
            self.store.close()

    # -- references ---------------------------------------------------------------------
    def ref(self, value: Any) -> Any:
        if isinstance(value, str) and value.startswith("@"):
            key = value[1:]
            if key not in self.refs:
                raise CaseFailure(f"reference {value} names nothing in this store")
            return self.refs[key]
        if isinstance(value, list):
            return [self.ref(v) for v in value]
        if isinstance(value, dict):
            return {k: self.ref(v) for k, v in value.items()}
        return value

    def name_of(self, source_type: str, source_id: int | None) -> str:
        for k, v in self.refs.items():
            if k.startswith(source_type + ":") and v == source_id:
                return "@" + k
        return f"{source_type}:{source_id}"

    # -- operations ---------------------------------------------------------------------
    def op(self, i: int, op: dict[str, Any]) -> None:
        kind = op.get("op")
        fn = getattr(self, f"_op_{kind}", None)
        if fn is None:
            raise CaseFailure(f"op {i}: unknown op {kind!r}")
        want = op.get("raises")
        try:
            fn(self.ref({k: v for k, v in op.items() if k not in ("op", "raises", "as")}),
               op.get("as"))
        except CaseFailure:
            raise
        except Exception as exc:
            if want is not None and want.lower() in str(exc).lower():
                self._refresh()
                return
            raise CaseFailure(f"op {i} ({kind}): {type(exc).__name__}: {exc}"[:400]) from None
        if want is not None:
            raise CaseFailure(f"op {i} ({kind}) should have failed with {want!r}, and did not")
        self._refresh()

    def _op_recall(self, a: dict[str, Any], as_: str | None, probe: bool = False) -> None:
        from datetime import datetime

        from store.harness.hook import context_text

        now = datetime.fromisoformat(a["now"].replace("Z", "+00:00")) if a.get("now") \
            else datetime.fromisoformat(TS.replace("Z", "+00:00"))
        fn = self.store.probe if probe else self.store.recall
        result = fn(a["query"], role=a.get("role"), project=a.get("project"),
                    channel=a.get("channel", self.channel),
                    historical=bool(a.get("historical", False)),
                    overrides=a.get("overrides"), now=now)
        self.results[as_ or "recall"] = result
        # what reaches the agent: the hook's additionalContext, exactly as it is built
        self.views[as_ or "recall"] = context_text(result)

    def _op_probe(self, a: dict[str, Any], as_: str | None) -> None:
        self._op_recall(a, as_, probe=True)

    def _op_feedback(self, a: dict[str, Any], as_: str | None) -> None:
        result = self.results[a["recall"]]
        self.store.feedback(int(result.trace_id), f"memory:{a['item']}"
                            if isinstance(a["item"], int) else str(a["item"]), a["kind"])

    def _op_propose(self, a: dict[str, Any], as_: str | None) -> None:
        info = self.store.propose(a["doc"], origin=a.get("origin", "api"),
                                  actor=a.get("actor"), auto_apply=a.get("auto_apply", True))
        if as_:
            self.refs[f"proposal:{as_}"] = int(info.id)
        self.results[as_ or "proposal"] = info

    def _op_approve(self, a: dict[str, Any], as_: str | None) -> None:
        info = self.store.approve(int(a["proposal"]), a.get("as_op"), a.get("reason"),
                                  actor=a.get("actor", self.principal))
        self.results[as_ or "approve"] = info

    def _op_reject(self, a: dict[str, Any], as_: str | None) -> None:
        self.store.reject(int(a["proposal"]), a["reason"], actor=a.get("actor", self.principal))

    def _op_edit(self, a: dict[str, Any], as_: str | None) -> None:
        self.store.edit_proposal(int(a["proposal"]), a["changes"],
                                 actor=a.get("actor", self.principal), reason=a.get("reason"))

    def _op_consolidate(self, a: dict[str, Any], as_: str | None) -> None:
        report = self.store.consolidate(a.get("session"), use_proposer=False,
                                        actor=a.get("actor"))
        self.results[as_ or "consolidate"] = report

    def _chunk_ids(self) -> set[int]:
        from store.core.models import Chunk

        with self.store.read() as conn:
            return {int(i) for i in conn.execute(select(Chunk.id)).scalars()}

    def _op_erase(self, a: dict[str, Any], as_: str | None) -> None:
        before = self._chunk_ids()
        result = self.store.erase(**a["scope"], actor=a.get("actor", self.principal),
                                  reason=a.get("reason", "conformance"),
                                  delete_exports=bool(a.get("delete_exports", False)))
        self.results[as_ or "erase"] = result
        # the chunks this erasure removed, for the runner's own ``index`` probe
        self.erased_chunks[as_ or "erase"] = before - self._chunk_ids()

    def _op_redact(self, a: dict[str, Any], as_: str | None) -> None:
        result = self.store.redact(**a["scope"], actor=a.get("actor", self.principal),
                                   reason=a.get("reason", "conformance"))
        self.results[as_ or "redact"] = result

    def _op_mark(self, a: dict[str, Any], as_: str | None) -> None:
        self.store.mark(a["level"], **a["scope"])

    def _op_export(self, a: dict[str, Any], as_: str | None) -> None:
        out = self.tmp / f"export-{as_ or 'x'}"
        self.store.export(out)
        self.results[as_ or "export"] = out

    def _op_search(self, a: dict[str, Any], as_: str | None) -> None:
        self.results[as_ or "search"] = self.store.search(a["query"], limit=a.get("limit", 20),
                                                          mode=a.get("mode", "hybrid"))

    def _op_append(self, a: dict[str, Any], as_: str | None) -> None:
        self._append(a["session"], a["entries"], a.get("project"))

    def _op_write_file(self, a: dict[str, Any], as_: str | None) -> None:
        if "memory" in a:
            self._memory_file(a["memory"])
        else:
            (self.memdir / a["name"]).write_text(a["text"], encoding="utf-8")

    def _op_delete_file(self, a: dict[str, Any], as_: str | None) -> None:
        (self.memdir / a["name"]).unlink()

    def _op_reindex(self, a: dict[str, Any], as_: str | None) -> None:
        self.store.reindex()

    def _op_warm_cache(self, a: dict[str, Any], as_: str | None) -> None:
        """Load the in-memory vector copy a warm process (daemon, app) keeps."""
        from store.recall.pool import cache_for

        cache = cache_for(self.store)
        with self.store.read() as conn:
            cache.sync(conn, self.store.embedder.name)
        self.results[as_ or "cache"] = cache

    # -- checks -------------------------------------------------------------------------
    def check(self, c: dict[str, Any]) -> None:
        kind = c.get("check")
        fn = getattr(self, f"_check_{kind}", None)
        if fn is None or kind not in CHECK_KEYS:
            raise CaseFailure(f"unknown check {kind!r}")
        allowed, asserting = CHECK_KEYS[kind]
        unknown = sorted(set(c) - {"check"} - allowed - asserting)
        if unknown:
            raise CaseFailure(f"check {kind}: unknown key {unknown[0]!r} (it takes "
                              f"{', '.join(sorted(allowed | asserting))})")
        if asserting and not asserting & set(c):
            raise CaseFailure(f"check {kind} asserts nothing: give one of "
                              f"{', '.join(sorted(asserting))}")
        fn(self.ref({k: v for k, v in c.items() if k != "check"}))

    def _recall(self, name: str) -> Any:
        if name not in self.results:
            raise CaseFailure(f"no recall {name!r} ran")
        return self.results[name]

    def _cand(self, result: Any, ref: Any) -> Any:
        stype, sid = ref if isinstance(ref, list) else ("memory", ref)
        for c in result.trace.candidates:
            if c.source_type == stype and c.source_id == sid:
                return c
        return None

    @staticmethod
    def _src(value: Any, default: str = "memory") -> tuple[str, Any]:
        if isinstance(value, dict):
            ((k, v),) = value.items()
            return k, v
        return default, value

    def _check_items(self, a: dict[str, Any]) -> None:
        result = self._recall(a["recall"])
        got = [(i.source_type, i.source_id) for i in result.items]
        for src in a.get("include", []):
            s = self._src(src)
            if s not in got:
                raise CaseFailure(f"{a['recall']}: {self.name_of(*s)} was not injected "
                                  f"(injected: {[self.name_of(*g) for g in got]})")
        for src in a.get("exclude", []):
            s = self._src(src)
            if s in got:
                raise CaseFailure(f"{a['recall']}: {self.name_of(*s)} was injected")
        if "count" in a and len(got) != a["count"]:
            raise CaseFailure(f"{a['recall']}: {len(got)} items injected, expected {a['count']}")
        if "first" in a and (not got or got[0] != self._src(a["first"])):
            raise CaseFailure(f"{a['recall']}: the first item is "
                              f"{self.name_of(*got[0]) if got else 'none'}, expected "
                              f"{self.name_of(*self._src(a['first']))}")

    def _check_decision(self, a: dict[str, Any]) -> None:
        result = self._recall(a["recall"])
        stype, sid = self._src(a["source"])
        cand = next((c for c in result.trace.candidates
                     if c.source_type == stype and c.source_id == sid), None)
        if cand is None:
            raise CaseFailure(f"{a['recall']}: {self.name_of(stype, sid)} is not a candidate")
        if "decision" in a and cand.decision != a["decision"]:
            raise CaseFailure(f"{a['recall']}: {self.name_of(stype, sid)} decided "
                              f"{cand.decision!r}, expected {a['decision']!r} ({cand.reason})")
        if "reason_has" in a and a["reason_has"].lower() not in (cand.reason or "").lower():
            raise CaseFailure(f"{a['recall']}: reason {cand.reason!r} lacks {a['reason_has']!r}")
        if a.get("masked") is not None and bool(cand.masked) != bool(a["masked"]):
            raise CaseFailure(f"{a['recall']}: {self.name_of(stype, sid)} masked "
                              f"{cand.masked}, expected {a['masked']}")
        for term, bound in (a.get("terms") or {}).items():
            value = cand.terms.get(term)
            if not _within(value, bound):
                raise CaseFailure(f"{a['recall']}: {self.name_of(stype, sid)} term {term} = "
                                  f"{value}, expected {bound}")

    def _check_term_order(self, a: dict[str, Any]) -> None:
        """Term ``term`` of ``high`` is strictly greater than that of ``low``."""
        result = self._recall(a["recall"])
        hi = self._cand(result, list(self._src(a["high"])))
        lo = self._cand(result, list(self._src(a["low"])))
        if hi is None or lo is None:
            raise CaseFailure(f"{a['recall']}: both sources must be candidates")
        t = a["term"]
        if not (hi.terms.get(t) or 0) > (lo.terms.get(t) or 0):
            raise CaseFailure(f"{a['recall']}: {t} {hi.terms.get(t)} of "
                              f"{self.name_of(hi.source_type, hi.source_id)} is not above "
                              f"{lo.terms.get(t)} of {self.name_of(lo.source_type, lo.source_id)}")

    def _check_not_candidate(self, a: dict[str, Any]) -> None:
        result = self._recall(a["recall"])
        stype, sid = self._src(a["source"])
        if self._cand(result, [stype, sid]) is not None:
            raise CaseFailure(f"{a['recall']}: {self.name_of(stype, sid)} is a candidate")

    def _check_candidate(self, a: dict[str, Any]) -> None:
        result = self._recall(a["recall"])
        stype, sid = self._src(a["source"])
        if self._cand(result, [stype, sid]) is None:
            raise CaseFailure(f"{a['recall']}: {self.name_of(stype, sid)} is not a candidate "
                              "(the positive control failed: the probe could not see it)")

    def _texts(self, where: str) -> list[tuple[str, str]]:
        """(label, text) pairs of one place text could be found."""
        kind, _, name = where.partition(":")
        if kind == "agent_view":
            return [(where, self.views[name])]
        if kind == "trace":
            result = self._recall(name)
            if result.trace_id is None:
                t = result.trace
            else:
                t = self.store.trace(int(result.trace_id))
            return [(where, json.dumps([c.to_json() for c in t.candidates]
                                       + [{"considered": t.considered}], ensure_ascii=False))]
        if kind == "items":
            return [(where, "\n".join(i.text for i in self._recall(name).items))]
        if kind == "search":
            return [(where, "\n".join(h.text for h in self.results[name]))]
        if kind in ("fts", "semantic", "hybrid"):
            return [(where, "\n".join(h.text for h in self.store.search(
                name, limit=50, mode=kind)))]
        if kind == "export":
            root = self.results[name]
            return [(f"{where}:{p.name}", p.read_text(encoding="utf-8", errors="replace"))
                    for p in sorted(Path(root).rglob("*")) if p.is_file()]
        if kind == "memory_dir":
            return [(f"{where}:{p.name}", p.read_text(encoding="utf-8", errors="replace"))
                    for p in sorted(self.memdir.rglob("*")) if p.is_file()] \
                if self.memdir.is_dir() else []
        if kind == "proposals":
            from store.core.db import orm
            from store.governance.models import Proposal

            with self.store.read() as conn, orm(conn) as s:
                rows = [[p.content, p.rationale, p.name, p.meta, p.target_snapshot]
                        for p in s.exec(select(Proposal)).all()]
            return [(where, json.dumps(rows, ensure_ascii=False))]
        if kind == "traces":
            out = []
            for t in self.store.traces(None):
                full = self.store.trace(int(t.id))
                out.append((f"traces:{t.id}", full.query + json.dumps(
                    [c.to_json() for c in full.candidates], ensure_ascii=False)))
            return out
        if kind == "cache":
            return [(where, "\n".join(self._cache_texts(name)))]
        if kind == "index":
            return [(where, "\n".join(self._index_texts(name)))]
        if kind == "chain":  # the operator's view of a supersession chain, as `chain --json`
            links = self.store.chain(int(self.ref("@memory:" + name)))
            return [(where, json.dumps([ln.to_json() | {"name": ln.name} for ln in links],
                                       ensure_ascii=False))]
        if kind == "integrity":
            return [(where, json.dumps([p.to_json() for p in self.store.integrity()],
                                       ensure_ascii=False))]
        if kind == "store":
            return [(where, "\n".join(
                [e.content for s in self.store.sessions() for e in self.store.entries(s.id)]
                + [m.body for m in self.store.memories()]))]
        raise CaseFailure(f"unknown place {where!r}")

    def _cache_texts(self, name: str) -> list[str]:
        """What the warm in-memory vector copy (``warm_cache``) still answers with, brought up
        to date as a recall would: the text of every chunk it holds a vector for, and for a
        vector whose chunk is gone, a line naming the erased text (a residue: a KNN over the
        copy can still match it)."""
        from store.core.models import Chunk
        from store.recall.pool import cache_for

        cache = self.results.get(name) or cache_for(self.store)
        needle = self.needle
        out = []
        with self.store.read() as conn:
            cache.sync(conn, self.store.embedder.name)
            for cid in (int(i) for i in cache.ids):
                text = conn.execute(select(Chunk.text).where(col(Chunk.id) == cid)).scalar()
                out.append(text if text is not None else
                           f"vector of erased chunk {cid} kept ({needle})")
        return out

    def _index_texts(self, name: str) -> list[str]:
        """The runner's own look at the search indexes after erase ``name``, independent of the
        store's verification: the vec0 table and the FTS5 index queried directly (by rowid for
        every chunk the erasure removed, and FTS ``MATCH`` of the probed text as a phrase). A
        row found names the probed text, so ``absent`` fails on it."""
        from sqlalchemy import text as sql

        if name not in self.erased_chunks:
            raise CaseFailure(f"index:{name}: no erase {name!r} ran")
        gone = self.erased_chunks[name]
        needle = self.needle
        out = []
        phrase = '"' + needle.replace('"', '""') + '"'
        with self.store.read() as conn:
            vec_rows = {int(r) for r in conn.execute(sql("SELECT rowid FROM chunk_vec")).scalars()}
            fts_hits = {int(r) for r in conn.execute(
                sql("SELECT rowid FROM chunk_fts WHERE chunk_fts MATCH :q"), {"q": phrase}
            ).scalars()}
            live = {int(i) for i in conn.execute(sql("SELECT id FROM chunk")).scalars()}
        for cid in sorted(vec_rows & gone):
            out.append(f"vec0 row of erased chunk {cid} kept ({needle})")
        for cid in sorted(fts_hits - live):
            out.append(f"FTS row {cid} of no stored chunk matches the erased text ({needle})")
        for cid in sorted(fts_hits & live):
            out.append(f"FTS row {cid} of a stored chunk matches ({needle})")
        return out

    def _check_chain(self, a: dict[str, Any]) -> None:
        """The supersession chain of ``of``, oldest first, is exactly ``ids``; ``erased_between``
        names the memories whose link in bridges an erased member (none other does); with
        ``integrity`` the store's integrity report is exactly that list of kinds."""
        links = self.store.chain(int(a["of"]))
        got = [ln.id for ln in links]
        if got != list(a["ids"]):
            raise CaseFailure(f"chain of {self.name_of('memory', a['of'])}: "
                              f"{[self.name_of('memory', i) for i in got]}, expected "
                              f"{[self.name_of('memory', i) for i in a['ids']]}")
        if "erased_between" in a:
            marked = [ln.id for ln in links if ln.erased_between]
            if marked != list(a["erased_between"]):
                raise CaseFailure(f"chain marks an erased gap before "
                                  f"{[self.name_of('memory', i) for i in marked]}, expected "
                                  f"{[self.name_of('memory', i) for i in a['erased_between']]}")
        if "integrity" in a:
            kinds = sorted(p.kind for p in self.store.integrity())
            if kinds != sorted(a["integrity"]):
                raise CaseFailure(f"integrity reports {kinds}, expected {a['integrity']}")

    def _check_absent(self, a: dict[str, Any]) -> None:
        self.needle = a["text"]
        needles = [a["text"]] + list(a.get("also", []))
        for where in a["where"]:
            for label, text in self._texts(where):
                for needle in needles:
                    if needle.lower() in text.lower():
                        raise CaseFailure(f"{label} holds {needle!r}")

    def _check_present(self, a: dict[str, Any]) -> None:
        """The positive control of ``absent``: the probe does find the text here."""
        self.needle = a["text"]
        for where in a["where"]:
            if not any(a["text"].lower() in t.lower() for _, t in self._texts(where)):
                raise CaseFailure(f"{where} does not hold {a['text']!r} (the probe is blind)")

    def _check_memory(self, a: dict[str, Any]) -> None:
        row = self._memory_row(a["source"])
        if row is None:
            if a.get("exists", True):
                raise CaseFailure(f"memory {a['source']} does not exist")
            return
        if a.get("exists") is False:
            raise CaseFailure(f"memory {row['name']!r} still exists")
        for k, want in (a.get("fields") or {}).items():
            got = row.get(k)
            if want == "<set>" and got is not None:
                continue
            if got != want:
                raise CaseFailure(f"memory {row['name']!r}: {k} is {got!r}, expected {want!r}")

    def _memory_row(self, mid: Any) -> dict[str, Any] | None:
        from store.core.models import Memory

        if isinstance(mid, str):
            return None
        from store.core.db import orm

        with self.store.read() as conn, orm(conn) as s:
            m = s.get(Memory, int(mid))
            if m is None:
                return None
            row = m.model_dump()
        if row.get("superseded_by_id") is not None:
            row["superseded_by"] = self.name_of("memory", row["superseded_by_id"])
        return row

    def _check_proposal(self, a: dict[str, Any]) -> None:
        info = self.store.proposal(int(a["proposal"]))
        if "status" in a and info.status != a["status"]:
            raise CaseFailure(f"proposal {info.id} is {info.status}, expected {a['status']}")
        for key in ("op", "type", "origin"):
            if key in a and getattr(info.summary, key, None) != a[key]:
                raise CaseFailure(f"proposal {info.id}: {key} is "
                                  f"{getattr(info.summary, key, None)!r}, expected {a[key]!r}")
        if "decided_by" in a:
            from store.governance.models import ProposalDecision

            with self.store.read() as conn:
                actors = [r for r in conn.execute(select(ProposalDecision.actor).where(
                    col(ProposalDecision.proposal_id) == int(info.id),
                    col(ProposalDecision.decision) == "approved")).scalars().all()]
            if a["decided_by"] not in actors:
                raise CaseFailure(f"proposal {info.id}: approvals by {actors}, expected one by "
                                  f"{a['decided_by']!r}")

    def _check_count(self, a: dict[str, Any]) -> None:
        what = a["what"]
        if what.startswith("proposals"):
            _, _, status = what.partition(":")
            n = len(self.store.proposals(status or None))
        elif what.startswith("memories"):
            _, _, status = what.partition(":")
            n = len([m for m in self.store.memories() if not status or m.status == status])
        elif what == "traces":
            n = len(self.store.traces(None))
        elif what == "tombstones":
            n = len(self.store.tombstones())
        elif what.startswith("entries:"):
            n = len(self.store.entries(what.split(":", 1)[1]))
        elif what.startswith("consolidated:"):
            n = int(self.results[what.split(":", 1)[1]].proposals_added)
        else:
            raise CaseFailure(f"unknown count {what!r}")
        bound = {k: a[k] for k in ("equals", "min", "max") if k in a}
        if not _within(n, bound):
            want = ", ".join(f"{k} {v}" for k, v in bound.items())
            raise CaseFailure(f"{what}: {n}, expected {a['equals'] if 'equals' in a else want}")

    def _check_erasure(self, a: dict[str, Any]) -> None:
        res = self.results[a["erase"]]
        v = res.verification
        names = [p.name for p in v.probes]
        for need in a.get("probes", []):
            if need not in names:
                raise CaseFailure(f"erasure verification ran no {need!r} probe (ran {names})")
        failed = [f"{p.name}: {p.detail}" for p in v.probes if not p.passed]
        if not v.passed or failed:
            raise CaseFailure(f"erasure not verified: {'; '.join(failed)[:300]}")
        if a.get("rows_at_least") and sum(res.closure.values()) < a["rows_at_least"]:
            raise CaseFailure(f"erasure closure took {sum(res.closure.values())} rows, "
                              f"expected at least {a['rows_at_least']}")

    def _check_budget(self, a: dict[str, Any]) -> None:
        """Every recall stops within its declared, counted budgets, and every candidate's
        decision has a reason (the trace read back from the store, not the return value)."""
        result = self._recall(a["recall"])
        cfg = result.trace.settings
        trace = self.store.trace(int(result.trace_id)) if result.trace_id is not None \
            else result.trace
        mem = sum(1 for i in result.items if i.source_type == "memory")
        ent = len(result.items) - mem
        if mem > int(cfg["memory_items"]) or ent > int(cfg["transcript_items"]):
            raise CaseFailure(f"{mem} memory / {ent} transcript items over the budget "
                              f"{cfg['memory_items']} / {cfg['transcript_items']}")
        long = [i for i in result.items if len(i.text) > int(cfg["item_chars"])]
        if long:
            raise CaseFailure(f"an item has {len(long[0].text)} characters, over "
                              f"item_chars {cfg['item_chars']}")
        # the pool counts the sources the channel allows; those it holds back are kept beside
        # them for the operator's trace, at most as many again
        allowed = {(c.source_type, c.source_id) for c in trace.candidates
                   if c.decision != "policy_filtered"}
        held = {(c.source_type, c.source_id) for c in trace.candidates
                if c.decision == "policy_filtered"}
        if len(allowed) > int(cfg["pool"]) or len(held) > int(cfg["pool"]):
            raise CaseFailure(f"{len(allowed)} candidate sources (+{len(held)} held back), "
                              f"over the pool {cfg['pool']}")
        if trace.considered != len(trace.candidates):
            raise CaseFailure(f"the trace says {trace.considered} considered but holds "
                              f"{len(trace.candidates)} candidates")
        injected = [c for c in trace.candidates if c.decision == "injected"]
        if len(injected) != len(result.items) or trace.injected != len(result.items):
            raise CaseFailure(f"{len(result.items)} items handed over, the trace records "
                              f"{len(injected)} injected ({trace.injected} in its count)")
        for c in trace.candidates:
            if c.decision not in DECISIONS or not (c.reason or "").strip():
                raise CaseFailure(f"candidate #{c.rank} decided {c.decision!r} with reason "
                                  f"{c.reason!r}")
        if "min_candidates" in a and len(trace.candidates) < a["min_candidates"]:
            raise CaseFailure(f"{len(trace.candidates)} candidates, expected at least "
                              f"{a['min_candidates']} (the budget was not exercised)")
        for d in a.get("decisions", []):
            if not any(c.decision == d for c in trace.candidates):
                raise CaseFailure(f"no candidate decided {d!r}: the budget was not exercised")

    def _check_provenance(self, a: dict[str, Any]) -> None:
        """Every active memory (or the named ones) resolves to retained evidence — an entry
        span that exists, a file, or the approval of the person who supplied the text — and
        a memory a proposal made resolves to that proposal and its decision."""
        from store.core.models import Entry, Evidence, Memory
        from store.governance.models import Proposal, ProposalDecision

        from store.core.db import orm

        with self.store.read() as c0, orm(c0) as conn:
            q = select(Memory).where(col(Memory.status) == "active")
            if "sources" in a:
                q = select(Memory).where(col(Memory.id).in_(list(a["sources"])))
            mems = conn.exec(q).all()
            if not mems:
                raise CaseFailure("no memory to check provenance of")
            for m in mems:
                evid = conn.exec(select(Evidence).where(
                    col(Evidence.memory_id) == m.id)).all()
                made = conn.exec(select(Proposal).where(
                    col(Proposal.memory_id) == m.id, col(Proposal.op).in_(
                        ["add", "supersede", "merge"]))).first()
                resolved = False
                for e in evid:
                    if e.entry_id is not None:
                        ent = conn.exec(select(Entry).where(
                            col(Entry.id) == e.entry_id)).first()
                        if ent is not None and (e.span_end is None
                                                or e.span_end <= len(ent.content)):
                            resolved = True
                    elif e.file_path and Path(e.file_path).is_file():
                        resolved = True
                if m.source_file and Path(m.source_file).is_file() and made is None:
                    resolved = True
                if made is not None:
                    people = [d for d in conn.exec(select(ProposalDecision).where(
                        col(ProposalDecision.proposal_id) == made.id,
                        col(ProposalDecision.decision) == "approved")).all()
                        if d.actor and not d.actor.startswith("policy:")]
                    if not resolved and people and made.origin in ("cli", "api", "app") \
                            and a.get("person_text_counts", True):
                        resolved = True  # the person who approved supplied the text
                    if not people and not [d for d in conn.exec(select(
                            ProposalDecision).where(col(ProposalDecision.proposal_id)
                                                    == made.id)).all()]:
                        raise CaseFailure(f"memory {m.name!r}: its proposal {made.id} has no "
                                          "recorded decision")
                elif not m.source_file:
                    raise CaseFailure(f"memory {m.name!r}: made by no proposal and read "
                                      "from no file")
                if not resolved:
                    raise CaseFailure(f"memory {m.name!r} resolves to no retained evidence "
                                      f"({len(evid)} evidence rows)")

    def _check_same_view(self, a: dict[str, Any]) -> None:
        """What two recalls handed the agent is the same text (their trace ids aside)."""
        import re

        views = [re.sub(r"\(trace \d+\)", "(trace N)", self.views[n]) for n in a["recalls"]]
        if views[0] != views[1]:
            raise CaseFailure(f"the agent's view of {a['recalls'][0]} and {a['recalls'][1]} "
                              f"differ: {views[0][:160]!r} vs {views[1][:160]!r}")

    def _check_entry(self, a: dict[str, Any]) -> None:
        e = self.store.entry(int(a["source"]))
        for k, want in (a.get("fields") or {}).items():
            got = getattr(e, k, None)
            if want == "<set>" and got is not None:
                continue
            if got != want:
                raise CaseFailure(f"entry {e.id}: {k} is {got!r}, expected {want!r}")

    def _check_audit(self, a: dict[str, Any]) -> None:
        events = self.store.audit_events(None)
        match = [e for e in events if e.action == a["action"]]
        if not match:
            raise CaseFailure(f"no audit event {a['action']!r}")
        if "actor" in a and not any(getattr(e, "actor", None) == a["actor"] for e in match):
            raise CaseFailure(f"no audit event {a['action']!r} by {a['actor']!r} "
                              f"(by {[getattr(e, 'actor', None) for e in match]})")

    # -- final state --------------------------------------------------------------------
    def final(self, spec: dict[str, Any]) -> str:
        actual = self.projection(spec["projection"], spec["expected"])
        got = sha256(canonical(actual))
        if got != spec["sha256"]:
            diff = _diff(spec["expected"], actual)
            raise CaseFailure(f"final-state digest {got[:12]}… differs from the expected "
                              f"{spec['sha256'][:12]}… ({spec['projection']}: {diff})")
        return got

    def projection(self, name: str, expected: Any) -> Any:
        kind, _, arg = name.partition(":")
        if kind == "memories":
            fields = sorted({f for v in expected.values() for f in v})
            out = {}
            for m in self.store.memories():
                row = self._memory_row(m.id) or {}
                out[m.name] = {f: row.get(f) for f in fields}
            return out
        if kind == "proposals":
            out = {}
            for k, v in self.refs.items():
                if k.startswith("proposal:"):
                    out[k.split(":", 1)[1]] = self.store.proposal(int(v)).status
            return out
        if kind == "items":
            return [self.name_of(i.source_type, i.source_id) for i in self._recall(arg).items]
        if kind == "counts":  # what the store holds: traces, proposals, memories, tombstones
            return {"traces": len(self.store.traces(None)),
                    "proposals": len(self.store.proposals(None)),
                    "memories": len(self.store.memories()),
                    "tombstones": len(self.store.tombstones())}
        if kind == "queue":  # every proposal in the store, oldest first: op, type, status
            return [[p.op, p.type, p.status] for p in
                    sorted(self.store.proposals(None), key=lambda p: int(p.id))]
        if kind == "chain":  # the chain of memory ``arg``: names and erased-gap marks
            return [[self.name_of("memory", ln.id), ln.status, ln.erased_between]
                    for ln in self.store.chain(int(self.ref("@memory:" + arg)))]
        if kind == "residue":
            text = expected["text"]
            places = {}
            for where in expected["places"]:
                places[where] = sum(text.lower() in t.lower() for _, t in self._texts(where))
            return {"text": text, "places": expected["places"], "hits": places}
        raise CaseFailure(f"unknown projection {name!r}")


def _within(value: Any, bound: Any) -> bool:
    if isinstance(bound, dict):
        if value is None:
            return False
        if "equals" in bound and value != bound["equals"]:
            return False
        if "max" in bound and value > bound["max"]:
            return False
        if "min" in bound and value < bound["min"]:
            return False
        if "below" in bound and not value < bound["below"]:
            return False
        return True
    return bool(value == bound)


def _diff(expected: Any, actual: Any) -> str:
    if isinstance(expected, dict) and isinstance(actual, dict):
        keys = sorted(set(expected) | set(actual), key=str)
        parts = [f"{k}: expected {expected.get(k)!r}, got {actual.get(k)!r}"
                 for k in keys if expected.get(k) != actual.get(k)]
        return "; ".join(parts)[:300]
    return f"expected {expected!r}, got {actual!r}"[:300]


def _slug(name: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in name.lower()).strip("-")[:60]
