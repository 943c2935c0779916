"""Privacy (LCA §12.2; DESIGN "Privacy"): redact and erase with a preview of the closure and
proof afterwards; entry sensitivity; tombstones.

- ``scope``: what a user names (a session, an entry, a memory, a text, a regex) and the
  matcher that finds it in any stored value;
- ``tables``: every relational table and its text columns and foreign keys, discovered from
  the SQLModel metadata, so that a capability's new tables are covered without a change here;
- ``closure``: every record that holds or points at the scope, with counts per table,
  computed before anything changes (``sets``: what a closure is made of; ``redaction``: the
  closure of a redaction; ``describe``: texts, fingerprints, chunks, exports and labels);
- ``apply``: erase (delete) or redact (``[REDACTED]`` in place) the closure in one
  transaction, with erasure fingerprints, a tombstone and an audit event; then the WAL is
  checkpointed (TRUNCATE) and the file vacuumed where needed;
- ``verify``: the probes (FTS, substring scan of every text column, semantic, traces,
  exports, raw bytes of the database and its WAL), stored and never writing a trace;
- ``api``: the operations ``store.facade`` exposes (erase, redact, preview, tombstones, mark).

Rows are read and written through the SQLModel classes (``store.core.models``, and the export
and recall models for the tables privacy names); tables known only at run time through Core
handles built from the discovered schema (``tables.rel``). No raw SQL but schema discovery.

May import: ``store.core``; ``store.export.models`` and ``store.recall.models`` (the tables of
exports and recall traces it reads and deletes); ``store.recall`` (its probe recall, and the
in-memory vector copy an erasure drops) through public names.
"""
