"""Governed memory writes (LCA §4.6, §4.6.1, §6.3): proposals, their checks, edit history and
decisions, supersession links, and flags on memories (an approved contradiction kept both ways).

- ``proposal``: a candidate durable write. ``op`` is NULL only for content-less history read
  from a harness's ``approval_*`` events (``origin = 'mindstone-event'``, ``entry_id`` the event
  entry; ``reindex`` rebuilds those). ``targets`` is a JSON list of memory ids (``merge`` has
  several); ``target_snapshot`` keeps what each target said when the proposal was made, so the
  diff and a stale-target refusal need no other record. ``revision`` counts edits.
- ``proposal_check``: one row per check and revision (pass / warn / fail, a one-line detail,
  JSON evidence, a suggested operation).
- ``proposal_edit``: the candidate before and after each edit.
- ``proposal_decision``: every state change (approved, rejected, applied, failed, verified, and
  decisions reported by a harness), who or which policy made it, why.
- ``supersession_link``: old memory → new memory, the proposal that made it; the pointer columns
  ``memory.supersedes_id`` / ``superseded_by_id`` are kept consistent with it. Existing pointers
  are copied into links here.
- ``memory_flag``: e.g. an unresolved contradiction approved as keep-both (recall's K term).
"""

VERSION = 6
NAME = "governance"

_WHO = "writer TEXT NOT NULL, writer_version TEXT NOT NULL, created_at TEXT NOT NULL"

STATEMENTS = [
    f"""CREATE TABLE proposal (
        id INTEGER PRIMARY KEY,
        op TEXT CHECK (op IN ('add', 'reinforce', 'revise', 'supersede', 'merge', 'noop',
            'quarantine')),
        type TEXT,
        targets TEXT NOT NULL DEFAULT '[]',
        target_snapshot TEXT,
        name TEXT,
        content TEXT,
        meta TEXT NOT NULL DEFAULT '{{}}',
        rationale TEXT,
        evidence TEXT NOT NULL DEFAULT '[]',
        origin TEXT NOT NULL CHECK (origin IN ('api', 'cli', 'file', 'consolidation',
            'proposer', 'mindstone-event')),
        proposer TEXT,
        status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved',
            'applied', 'failed', 'rejected')),
        status_reason TEXT,
        revision INTEGER NOT NULL DEFAULT 0,
        ts TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        decided_at TEXT,
        actor TEXT,
        memory_id INTEGER REFERENCES memory(id) ON DELETE SET NULL,
        verified INTEGER,
        verification TEXT,
        external_id TEXT,
        kind TEXT,
        entry_id INTEGER REFERENCES entry(id) ON DELETE CASCADE,
        idem_key TEXT UNIQUE,
        {_WHO})""",
    "CREATE INDEX proposal_by_status ON proposal (status, ts)",
    "CREATE INDEX proposal_by_entry ON proposal (entry_id)",
    "CREATE INDEX proposal_by_external ON proposal (external_id)",
    f"""CREATE TABLE proposal_check (
        id INTEGER PRIMARY KEY,
        proposal_id INTEGER NOT NULL REFERENCES proposal(id) ON DELETE CASCADE,
        revision INTEGER NOT NULL DEFAULT 0,
        kind TEXT NOT NULL CHECK (kind IN ('duplicate', 'contradiction', 'source_support',
            'budget', 'procedure_risk', 'verifier')),
        result TEXT NOT NULL CHECK (result IN ('pass', 'warn', 'fail')),
        detail TEXT NOT NULL,
        evidence TEXT NOT NULL DEFAULT '{{}}',
        suggestion TEXT,
        {_WHO})""",
    "CREATE INDEX proposal_check_by_proposal ON proposal_check (proposal_id, revision)",
    f"""CREATE TABLE proposal_edit (
        id INTEGER PRIMARY KEY,
        proposal_id INTEGER NOT NULL REFERENCES proposal(id) ON DELETE CASCADE,
        revision INTEGER NOT NULL,
        ts TEXT NOT NULL,
        actor TEXT NOT NULL,
        before TEXT NOT NULL,
        after TEXT NOT NULL,
        reason TEXT,
        {_WHO},
        UNIQUE (proposal_id, revision))""",
    f"""CREATE TABLE proposal_decision (
        id INTEGER PRIMARY KEY,
        proposal_id INTEGER NOT NULL REFERENCES proposal(id) ON DELETE CASCADE,
        ts TEXT NOT NULL,
        actor TEXT NOT NULL,
        decision TEXT NOT NULL CHECK (decision IN ('approved', 'rejected', 'applied',
            'failed', 'verified', 'verify_failed')),
        as_op TEXT,
        reason TEXT,
        policy TEXT,
        connector TEXT,
        {_WHO})""",
    "CREATE INDEX proposal_decision_by_proposal ON proposal_decision (proposal_id, ts)",
    f"""CREATE TABLE supersession_link (
        id INTEGER PRIMARY KEY,
        old_id INTEGER NOT NULL REFERENCES memory(id) ON DELETE CASCADE,
        new_id INTEGER NOT NULL REFERENCES memory(id) ON DELETE CASCADE,
        proposal_id INTEGER REFERENCES proposal(id) ON DELETE SET NULL,
        ts TEXT NOT NULL,
        source TEXT NOT NULL CHECK (source IN ('proposal', 'import', 'pointer')),
        {_WHO},
        UNIQUE (old_id, new_id))""",
    "CREATE INDEX supersession_link_by_new ON supersession_link (new_id)",
    f"""CREATE TABLE memory_flag (
        id INTEGER PRIMARY KEY,
        memory_id INTEGER NOT NULL REFERENCES memory(id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('contradiction')),
        other_id INTEGER REFERENCES memory(id) ON DELETE CASCADE,
        proposal_id INTEGER REFERENCES proposal(id) ON DELETE SET NULL,
        reason TEXT,
        ts TEXT NOT NULL,
        resolved_at TEXT,
        {_WHO})""",
    "CREATE INDEX memory_flag_by_memory ON memory_flag (memory_id, kind)",
    # Links for the pointers stores already hold (imported before links existed).
    """INSERT OR IGNORE INTO supersession_link (old_id, new_id, proposal_id, ts, source, writer,
        writer_version, created_at)
        SELECT m.supersedes_id, m.id, NULL, COALESCE(m.valid_from, m.created, m.created_at),
            'pointer', 'lca-tui:migration-6', '6', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
        FROM memory m JOIN memory o ON o.id = m.supersedes_id""",
]
