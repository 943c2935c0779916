"""Live harness sessions (issue 14): entries stored but waiting for embedding, chunks kept in
FTS only, and a record of every hook run.

- ``embed_queue``: an entry written without its chunks (a ``UserPromptSubmit`` hook stores new
  lines at once and leaves the embedding to the daemon or the next checkpoint). While it
  waits, its text is in ``embed_queue_fts`` (contentless FTS5, rowid = entry id) so recall and
  search find it lexically. Triggers keep that index in step: a queued entry is indexed, a
  dequeued or erased one (the queue row cascades with its entry) leaves it, and a redacted one
  is re-indexed with its new text. ``secure-delete`` overwrites what leaves.
- ``chunk.lexical_only``: 1 for a window past the embedded head of a long tool call or result:
  in FTS, no vector, by design (not a failure).
- ``hook_run``: each ``lca-tui hook`` run: event, session, status, error, how it ran
  (in-process or through the daemon), what it added, injected and checkpointed.
"""

VERSION = 12
NAME = "harness"

_WHO = "writer TEXT NOT NULL, writer_version TEXT NOT NULL, created_at TEXT NOT NULL"

STATEMENTS = [
    f"""CREATE TABLE embed_queue (
        entry_id INTEGER PRIMARY KEY REFERENCES entry(id) ON DELETE CASCADE,
        queued_at TEXT NOT NULL,
        {_WHO})""",
    """CREATE VIRTUAL TABLE embed_queue_fts USING fts5(text, content='', contentless_delete=1,
        tokenize='porter unicode61')""",
    "INSERT INTO embed_queue_fts (embed_queue_fts, rank) VALUES ('secure-delete', 1)",
    """CREATE TRIGGER embed_queue_indexed AFTER INSERT ON embed_queue BEGIN
        INSERT INTO embed_queue_fts (rowid, text)
            SELECT id, content FROM entry WHERE id = new.entry_id;
        END""",
    """CREATE TRIGGER embed_queue_dequeued AFTER DELETE ON embed_queue BEGIN
        DELETE FROM embed_queue_fts WHERE rowid = old.entry_id;
        END""",
    """CREATE TRIGGER embed_queue_rewritten AFTER UPDATE OF content ON entry
        WHEN EXISTS (SELECT 1 FROM embed_queue WHERE entry_id = new.id) BEGIN
        DELETE FROM embed_queue_fts WHERE rowid = new.id;
        INSERT INTO embed_queue_fts (rowid, text) VALUES (new.id, new.content);
        END""",
    "ALTER TABLE chunk ADD COLUMN lexical_only INTEGER NOT NULL DEFAULT 0",
    f"""CREATE TABLE hook_run (
        id INTEGER PRIMARY KEY,
        ts TEXT NOT NULL,
        event TEXT NOT NULL,
        session_id TEXT,
        status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
        error TEXT,
        via TEXT NOT NULL CHECK (via IN ('process', 'daemon')),
        duration_ms REAL,
        entries_added INTEGER NOT NULL DEFAULT 0,
        chunks_embedded INTEGER NOT NULL DEFAULT 0,
        injected INTEGER NOT NULL DEFAULT 0,
        trace_id INTEGER REFERENCES recall_trace(id) ON DELETE SET NULL,
        checkpoint_id INTEGER REFERENCES checkpoint(id) ON DELETE SET NULL,
        {_WHO})""",
    "CREATE INDEX hook_run_by_ts ON hook_run (ts)",
    "CREATE INDEX hook_run_by_status ON hook_run (status, ts)",
]
