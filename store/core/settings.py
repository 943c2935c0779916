"""Settings: documented defaults, overridden by a TOML file, then by the command line.

Every setting has a dotted name whose first part is its TOML table, e.g. ``embed.backend`` is
``[embed] backend = "fallback"`` in ``$XDG_CONFIG_HOME/lca-tui/config.toml`` (or the file named
by ``LCA_CONFIG``). ``lca-tui config`` prints each value in force and where it came from.
Later capabilities add their settings to ``SPECS``; nothing else needs to change.
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.core.vocab import ENTRY_KINDS


@dataclass(frozen=True)
class Spec:
    """One setting: its name, default, type and what it means."""

    name: str
    default: Any
    doc: str
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    """With ``maximum``: the range a number must be in (inclusive); a bounded number must also
    be finite (NaN and infinity are refused)."""
    maximum: float | None = None

    @property
    def kind(self) -> type:
        return type(self.default) if self.default is not None else str


RETENTION_TYPES = ("user", "feedback", "project", "reference", "procedure", "identity",
                   "handoff")
"""The memory types with a ``memory.retention_days.<type>`` setting (another type never
expires)."""

SPECS: list[Spec] = [
    Spec("embed.backend", "auto",
         "Embedder: 'auto' loads the local all-MiniLM-L6-v2 int8 model and falls back to the "
         "deterministic hashing embedder (degraded) only when it cannot load; 'model' requires "
         "the model; 'fallback' forces the hashing embedder (tests, speed).",
         ("auto", "model", "fallback")),
    Spec("embed.max_tokens", 256,
         "Chunk size limit in model tokens, [CLS] and [SEP] included (all-MiniLM-L6-v2 was "
         "trained at 256). Longer text is split into several chunks, never cut."),
    Spec("embed.batch_size", 64, "Texts per embedding batch at most."),
    Spec("embed.batch_tokens", 2048,
         "Padded tokens per embedding batch at most (texts × the longest): texts are grouped "
         "by length so that little of a batch is padding; 2,048 measured best on 2 cores "
         "(4,096: 4 % fewer tokens per CPU-second, 8,192: 20 % fewer)."),
    Spec("embed.threads", 0, "Embedding batches run at once, one ONNX Runtime thread each; 0 "
         "means one per core this process may run on."),
    Spec("embed.tool_head_tokens", 128,
         "Tokens of a tool call or tool result that get a vector: a longer one embeds its "
         "head and keeps every window in FTS (chunk.lexical_only). On a real 1,100-chunk "
         "session this cut the tokens to embed from 152,000 to about 60,000; 0 embeds every "
         "window. See the README for what it costs recall."),
    Spec("store.busy_timeout_ms", 5000,
         "How long a writer waits for another process's write lock before giving up."),
    Spec("store.write_retry_seconds", 120.0,
         "How long a writer keeps retrying when another writer holds the lock past the busy "
         "timeout (a long reindex, a big import), before it gives up with 'store is busy'."),
    Spec("store.keep_connections", 0, minimum=0, maximum=64, doc=
         "Connections a process keeps open between transactions. 0: each transaction opens "
         "its own (a short-lived command). `lca-tui serve` keeps 4: opening one costs about a "
         "millisecond (sqlite-vec loaded, pragmas set), and a hook runs a dozen transactions."),
    Spec("store.url", "",
         "A store on a PostgreSQL server with pgvector, `postgresql://user@host:port/db` "
         "(used when neither --store nor $LCA_STORE names one). Leave the password out: "
         "libpq reads PGPASSWORD, ~/.pgpass or a service file (`?service=name`)."),
    Spec("store.pg_ef_search", 100, minimum=10, maximum=1000, doc=
         "On PostgreSQL: hnsw.ef_search, the candidates the HNSW index visits for a vector "
         "query (more: closer to exact search, slower). Recall asks for its pool of 50 "
         "nearest; at 100 their top 10 matched exact search's (docs/postgres.md)."),
    Spec("store.read_only", False,
         "Open the store with every writing action refused (`--read-only`): the file is "
         "opened read-only, recalls keep no trace, health scans are not stored, an older "
         "store is not migrated (refused)."),
    Spec("store.writer", "lca-tui",
         "The writer id stamped on rows this process writes (a harness sets its own)."),
    Spec("search.limit", 10, "Hits shown by `lca-tui search` and the Transcript search."),
    # -- app ---------------------------------------------------------------------------------
    Spec("app.theme", "dark", "The app's colours: dark or light (`lca-tui --theme`).",
         choices=("dark", "light")),
    Spec("app.export_dir", "", "Where the app's `x` (Export CSV) writes a table's rows "
         "(empty: the current folder)."),
    Spec("app.refresh_seconds", 1.0, "How often an open screen checks the store for changes "
         "written by another process (a cheap PRAGMA data_version), and reloads if any."),
    # -- recall (LCA §5): R = αS + βE + γT + δA + εQ − λK ---------------------------------
    Spec("recall.alpha", 0.55, "α, weight of S (similarity)."),
    Spec("recall.beta", 0.15, "β, weight of E (experiential weight)."),
    Spec("recall.gamma", 0.10, "γ, weight of T (temporal salience)."),
    Spec("recall.delta", 0.10, "δ, weight of A (source authority)."),
    Spec("recall.epsilon", 0.10, "ε, weight of Q (task relevance)."),
    Spec("recall.lambda", 0.30, "λ, weight of K (risk penalty)."),
    Spec("recall.cos_weight", 0.7, "w in S = w·cos + (1−w)·lex."),
    Spec("recall.adjacent_weight", 0.5,
         "μ, adjacent support: a transcript entry's S = max(own, (own + μ·adj) / (1 + μ)), adj "
         "the best own S of the entries just before and after it (same session and agent); 0 "
         "turns it off. Chosen on LoCoMo's five tuning conversations (`lca-tui eval locomo`, "
         "docs/recall.md)."),
    Spec("recall.floor", 0.25,
         "Similarity floor on S: nothing below it is injected. Chosen for all-MiniLM-L6-v2 by "
         "`lca-tui calibrate` (the 25th percentile of the S of the assistant turns that answer "
         "a user's question, rounded down to 0.05): 0.25 on the real sessions of "
         "../shared/data/claude-code (5 questions; answers' S p25 0.261, p50 0.318, cos p50 0.38), "
         "where the paper's 0.50 would drop most answers; the demo sessions gave 0.45 "
         "(18 questions, p25 0.457). Run `lca-tui calibrate` on your own store to check."),
    Spec("recall.memory_items", 4, "Memories injected at most per recall."),
    Spec("recall.transcript_items", 2, "Transcript items injected at most per recall."),
    Spec("recall.item_chars", 800, "Characters of each injected item at most."),
    Spec("recall.pool", 50, "Candidate pool: at most this many sources, taken from the vector "
         "KNN and FTS5 BM25 rankings in turn (best cosine, best BM25, next cosine, ...), "
         "skipping chunks already taken; several chunks of one source count once.",
         minimum=1, maximum=10000),
    Spec("recall.vector_cache", True, "Keep an in-memory copy of the vectors for KNN (a warm "
         "process: the app, `lca-tui serve`); off, KNN scans sqlite-vec instead, cheaper for "
         "a process that answers one recall (a hook run without the daemon turns it off)."),
    Spec("recall.vector_file", True, "Keep that copy in a file beside a SQLite store too "
         "(`<store>-vectors`, memory-mapped): the first recall of the next process maps it "
         "instead of reading every vector. It holds vector bytes: an erasure deletes it and "
         "its verification searches it; off, no file is written or read."),
    Spec("recall.half_life_days", 30.0, "Half-life of T when a memory names none."),
    Spec("recall.duplicate_cos", 0.95, "A candidate whose vector is at least this cosine to "
         "one already injected is a near-duplicate and is not injected (diversity)."),
    # -- context pressure (LCA §4.5, §6.2) ---------------------------------------------------
    Spec("governance.proposer_command", "",
         "An external proposer for `lca-tui consolidate` (a language model, say): it gets the "
         "sessions' new entries as JSON on stdin and prints proposals in the `propose` format. "
         "Empty: none."),
    Spec("governance.proposer_timeout_s", 30.0,
         "Seconds the proposer command may run before it is stopped and reported."),
    Spec("context.window_tokens", 200000, "The model's context window when a harness does "
         "not report one (Claude Code: 200,000)."),
    Spec("context.checkpoint_percent", 80.0, "Checkpoint threshold, percent of the window: "
         "the pre-compaction checkpoint should fire here."),
    Spec("context.auto_compact_percent", 92.0, "The harness's auto-compact threshold, percent "
         "of the window."),
    # -- health signals (LCA §6.1, §10.6, Appendix D) ----------------------------------------
    Spec("health.duplicate_warn_percent", 5.0, "duplicate_ratio warns above this percent of "
         "index rows repeating a row already there for the same source and span.",
         minimum=0, maximum=100),
    Spec("health.duplicate_fail_percent", 20.0, "duplicate_ratio fails above this percent.",
         minimum=0, maximum=100),
    Spec("health.near_duplicate_similarity", 0.97, "A chunk whose nearest neighbour (recorded "
         "at write time) is at least this similar is a near-duplicate: information only.",
         minimum=0, maximum=1),
    Spec("health.critical_budget_chars", 50000, "Budget, in characters, of the always-loaded "
         "critical memories (the paper's reference budget); critical_budget fails above it, and "
         "the gate flags a promotion to critical past it (the old name "
         "governance.critical_budget_chars is an alias).",
         minimum=1),
    Spec("health.critical_budget_warn_percent", 90.0, "critical_budget warns above this "
         "percent of the budget.",
         minimum=0, maximum=100),
    Spec("health.checkpoint_noop_days", 7, "checkpoint_noop fails on a checkpoint that "
         "embedded nothing within this many days; older ones warn.",
         minimum=0),
    Spec("health.index_lag_fail_percent", 1.0, "index_lag fails above this percent of "
         "indexable sources lagging (it warns on any).",
         minimum=0, maximum=100),
    Spec("health.index_wait_seconds", 300, "A source younger than this with no chunk yet is "
         "counted as waiting for the indexer (shown apart from older lag).",
         minimum=0),
    Spec("health.index_queue_hours", 24, "An entry a hook queued for embedding (by the daemon "
         "or the next checkpoint; found by FTS meanwhile) is not index lag until it has "
         "waited this many hours.",
         minimum=0),
    Spec("health.canonical_version", "", "The canonical code version writers should run: a "
         "bare version applies to lca-tui's own writers (default: the running lca-tui's "
         "version); 'writer=version' pairs, comma separated, name other programs' writers."),
    Spec("health.stale_proposal_days", 7, "stale_proposals warns on proposals pending longer "
         "than this many days.",
         minimum=0),
    Spec("health.offending_limit", 500, "Offending rows listed per signal (the total is always "
         "counted); stored scans keep the same number of ids.",
         minimum=0),
    Spec("health.trend_seconds", 3600, "A scan identical to the previous stored one is stored "
         "again only after this many seconds, so an open app does not flood the trend.",
         minimum=0),
    # -- governed memory writes (LCA §4.6, §4.6.1) ------------------------------------------
    Spec("memory.dir", "",
         "The bound memory directory (MindStone layout): applied writes are also written there "
         "as Markdown files, atomically, hits and prevented included. Empty: none bound."),
    *(Spec(f"memory.retention_days.{t}", 0,
           f"Days an active memory of type {t!r} is kept after it became valid or was "
           "last applied before the retention pass (`lca-tui expire`) proposes expiring it; 0: "
           "kept for ever. Critical and evergreen memories never expire.",
           minimum=0, maximum=365_000)
      for t in RETENTION_TYPES),
    *(Spec(f"transcript.retention_days.{k}", 0,
           f"Days a transcript entry of kind {k!r} is kept after its time (its own timestamp, "
           "else when it was imported) before `lca-tui expire --yes` erases it through the "
           "privacy erasure (its closure, verified, one tombstone); 0: kept for ever.",
           minimum=0, maximum=365_000)
      for k in ENTRY_KINDS),
    Spec("governance.duplicate_cos", 0.92,
         "A proposal whose text is at least this cosine to an active memory is a duplicate: "
         "approving it offers `reinforce` of that memory instead."),
    Spec("governance.contradiction_cos", 0.80,
         "Contradiction heuristic: an active memory sharing a tag or project, at least this "
         "cosine to the candidate, whose text differs in a negation, number, date or the value "
         "given to the same key."),
    Spec("governance.support_overlap", 0.6,
         "Source support: a candidate sentence is supported when this share of its words is "
         "found in one evidence span (or its cosine to a span reaches governance.support_cos)."),
    Spec("governance.support_cos", 0.75,
         "Source support: cosine between a candidate sentence and an evidence sentence that "
         "counts as support."),
    Spec("identity.name", "",
         "The person recorded on decisions, audit events and tombstones when neither --actor "
         "nor LCA_ACTOR names one (empty: the OS account running lca-tui, never the program's "
         "name)."),
    Spec("governance.auto_apply", "reinforce,noop",
         "Operations applied without a person when no check failed (comma-separated; empty "
         "for none). Never `procedure` or `identity` writes, whatever this says."),
    Spec("governance.verifier_command", "",
         "An external verifier (LCA §4.6.1): a command that reads the candidate, the memories "
         "it touches and its source spans as JSON on stdin and prints a verdict JSON "
         "{\"result\": \"pass|warn|fail\", \"detail\": \"...\"}. Empty: none."),
    Spec("governance.verifier_timeout_s", 20.0,
         "Seconds the verifier may take; past it, it is stopped and its check is a warn."),
    # -- secrets caught at capture (issue 30) ----------------------------------------------
    Spec("privacy.detect_secrets", True,
         "Run the secrets detector on every entry and memory written (keys, tokens, private "
         "keys, JWTs, passwords in URLs, KEY=value lines): a hit is stored `secret`, masked, "
         "never injected, indexed with placeholders. Off only for a store whose content is "
         "a fixed story (the demo turns it off for its own import)."),
    Spec("privacy.detect_email", False,
         "Also treat an e-mail address in an entry or a memory as a secret found at capture "
         "(the record is stored `secret`, its index holds `[secret: email]`). Off by default: "
         "transcripts are full of commit authors and package maintainers."),
    Spec("privacy.detect_phone", False,
         "Also treat a phone number (Google's `phonenumbers`, valid numbers only) as a secret "
         "found at capture. Off by default."),
    Spec("privacy.phone_region", "",
         "The region (ISO 3166 code, e.g. `GB`) whose national phone numbers "
         "`privacy.detect_phone` recognises; empty: international (+…) numbers only."),
]

SPEC_BY_NAME: dict[str, Spec] = {spec.name: spec for spec in SPECS}
KEYS_PREFIX = "keys."
"""Names under it remap the app's key bindings by id (``[keys]`` in config.toml)."""


def config_path() -> Path:
    """The TOML file read for overrides: ``LCA_CONFIG``, else the XDG config directory."""
    explicit = os.environ.get("LCA_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "lca-tui" / "config.toml"


class SettingsError(ValueError):
    """A setting name or value that cannot be used."""


def _coerce(spec: Spec, value: Any, where: str) -> Any:
    kind = spec.kind
    try:
        if kind is bool:
            if isinstance(value, str):
                lowered = value.strip().lower()
                if lowered not in {"true", "false", "1", "0", "yes", "no", "on", "off"}:
                    raise ValueError(value)
                result: Any = lowered in {"true", "1", "yes", "on"}
            else:
                result = bool(value)
        elif kind is int:
            if isinstance(value, bool):
                raise ValueError(value)
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(value)  # TOML's inf, -inf, nan, 1e400
            result = int(value)
            if not -(2**63) <= result < 2**63:
                raise SettingsError(f"{where}: {spec.name} must be int, got {value!r}: out "
                                    "of range (a 64-bit integer)")
        elif kind is float:
            result = float(value)
        else:
            result = str(value)
    except SettingsError:
        raise
    except (TypeError, ValueError, OverflowError) as exc:
        raise SettingsError(
            f"{where}: {spec.name} must be {kind.__name__}, got {value!r}") from exc
    if spec.choices and result not in spec.choices:
        raise SettingsError(
            f"{where}: {spec.name} must be one of {', '.join(spec.choices)}, got {result!r}")
    if spec.minimum is not None or spec.maximum is not None:
        if not math.isfinite(result):
            raise SettingsError(f"{where}: {spec.name} must be a finite number, got {value!r}")
        if spec.minimum is not None and result < spec.minimum:
            raise SettingsError(f"{where}: {spec.name} must be at least {spec.minimum:g}, "
                                f"got {value!r}")
        if spec.maximum is not None and result > spec.maximum:
            raise SettingsError(f"{where}: {spec.name} must be at most {spec.maximum:g}, "
                                f"got {value!r}")
    return result


ORDERED = [("health.duplicate_warn_percent", "health.duplicate_fail_percent")]
"""(lower, higher) pairs: a warn threshold above its fail threshold would never warn."""


def _check_order(settings: Settings) -> None:
    for low, high in ORDERED:
        if settings[low] > settings[high]:
            raise SettingsError(
                f"{settings.source(high)}: {high} ({settings[high]:g}) must be at least "
                f"{low} ({settings[low]:g}, from {settings.source(low)})")


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


ALIASES = {"governance.critical_budget_chars": "health.critical_budget_chars"}
"""Old names kept working: the gate and Health grade the critical budget from one setting."""


class Settings:
    """The settings in force, each with the place its value came from."""

    def __init__(self, values: dict[str, Any], sources: dict[str, str],
                 keys: dict[str, tuple[str, str]] | None = None) -> None:
        self._values = values
        self._sources = sources
        self._keys: dict[str, tuple[str, str]] = dict(keys or {})
        """The app's keymap: binding id -> (keys, where it was set) (``[keys]`` table)."""

    @classmethod
    def defaults(cls) -> Settings:
        return cls({s.name: s.default for s in SPECS}, {s.name: "default" for s in SPECS})

    @classmethod
    def load(
        cls, overrides: dict[str, Any] | None = None, path: Path | None = None
    ) -> Settings:
        """Defaults, then the TOML file (if it exists), then ``overrides`` (command line)."""
        settings = cls.defaults()
        toml_path = path or config_path()
        if toml_path.is_file():
            try:
                data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
                raise SettingsError(f"{toml_path}: cannot read settings: {exc}") from exc
            for name, value in _flatten(data).items():
                settings._set(name, value, str(toml_path))
        env_backend = os.environ.get("LCA_EMBEDDER")
        if env_backend:
            settings._set("embed.backend", env_backend, "env LCA_EMBEDDER")
        for name, value in (overrides or {}).items():
            settings._set(name, value, "command line")
        _check_order(settings)
        return settings

    def _set(self, name: str, value: Any, source: str) -> None:
        if name.startswith(KEYS_PREFIX):  # `[keys]` quit = "ctrl+q": a key binding remapped
            binding = name[len(KEYS_PREFIX):]
            if not isinstance(value, str) or not value.strip() or not binding:
                raise SettingsError(f"{source}: {name} must name the key(s) as a string, "
                                    f"e.g. \"ctrl+q\" or \"f2,ctrl+a\" (got {value!r})")
            self._keys[binding] = (value.strip(), source)
            return
        name = ALIASES.get(name, name)
        spec = SPEC_BY_NAME.get(name)
        if spec is None:
            raise SettingsError(f"{source}: unknown setting {name!r} (see `lca-tui config`)")
        self._values[name] = _coerce(spec, value, source)
        self._sources[name] = source

    def with_overrides(self, overrides: dict[str, Any], source: str = "command line") -> Settings:
        copy = Settings(dict(self._values), dict(self._sources), self._keys)
        for name, value in overrides.items():
            copy._set(name, value, source)
        _check_order(copy)
        return copy

    def __getitem__(self, name: str) -> Any:
        return self._values[ALIASES.get(name, name)]

    def get(self, name: str, default: Any = None) -> Any:
        return self._values.get(ALIASES.get(name, name), default)

    def source(self, name: str) -> str:
        return self._sources[ALIASES.get(name, name)]

    def section(self, prefix: str) -> dict[str, Any]:
        """The settings under ``prefix.`` as a plain dict keyed by the last name part."""
        head = prefix + "."
        return {k[len(head):]: v for k, v in self._values.items() if k.startswith(head)}

    def keymap(self) -> dict[str, str]:
        """The key bindings remapped by the settings: binding id -> keys (Textual's keymap)."""
        return {binding: keys for binding, (keys, _) in self._keys.items()}

    def key_source(self, binding: str) -> str:
        """Where the key of ``binding`` was remapped (the file, or the command line)."""
        return self._keys[binding][1]

    def as_dict(self) -> dict[str, Any]:
        return dict(self._values)

    def rows(self) -> list[tuple[str, Any, str, str]]:
        """(name, value, source, doc) for every setting, in declaration order."""
        return [(s.name, self._values[s.name], self._sources[s.name], s.doc) for s in SPECS]


def parse_assignment(text: str) -> tuple[str, str]:
    """``name=value`` from the command line's ``--set``."""
    if "=" not in text:
        raise SettingsError(f"--set expects NAME=VALUE, got {text!r}")
    name, value = text.split("=", 1)
    return name.strip(), value.strip()
