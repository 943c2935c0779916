"""The core of the store: what every capability builds on.

Owns the SQLite file (``db``), the numbered migrations, the settings, the SQLModel tables
(``models``) and the plain dataclasses handed out (``records``), ``StoreBase`` (connections,
reads, search, appending entries), the one write path for entries (``writes``) and for
memories (``memories``), chunking, embedding, indexing, and the vector/FTS module (``vec``: the
only place sqlite-vec and FTS5 are spoken to).

May import: the standard library and third-party packages. Never a capability
(``store.ingest``, ``store.recall``, ...), never ``store.facade``.
"""
