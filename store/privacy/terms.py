"""Keyed fingerprints of an erased text's distinctive words and their FTS stems, kept per
tombstone (``store_meta`` key ``privacy.terms.<id>``: HMAC-SHA256 with the store's erasure
secret, ``store.core.erasure``), so that a re-verification (``recover``) can run the lexical
and substring probes again without the text, which is kept nowhere."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from sqlmodel import select

from store.core import erasure, vec
from store.core.models import StoreMeta

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from store.core.base import StoreBase as Store

TERMS_KEY = "privacy.terms.{}"


def remember_terms(store: Store, tombstone_id: int, words: list[str]) -> int:
    """Keep keyed fingerprints of the erased text's distinctive ``words`` (and their FTS
    stems) for the tombstone, so a later re-verification can run the lexical and substring
    probes again without the text. Only the stems no remaining FTS row holds right after the
    erasure are kept (``ledgerline_test`` is indexed as ``ledgerlin`` and ``test``, which
    other rows may legitimately hold: finding them later is no leak). Returns how many words
    were fingerprinted."""
    words = sorted({w.lower() for w in words if w})
    if not words:
        return 0
    with store.write() as conn:
        key = erasure.stored_key(conn)
        if key is None:
            erasure.keyed_hash(conn, "term", "")  # creates the store's secret
            key = erasure.stored_key(conn)
        assert key is not None
        gone = vec.fts_stems(conn, words) - vec.fts_terms(conn)
        doc = {"words": sorted(erasure.keyed(key, "term", w) for w in words),
               "stems": sorted(erasure.keyed(key, "stem", t) for t in gone)}
        name = TERMS_KEY.format(tombstone_id)
        table = StoreMeta.__table__  # type: ignore[attr-defined]
        conn.execute(table.delete().where(table.c.key == name))
        conn.execute(table.insert().values(key=name, value=json.dumps(doc)))
    return len(words)


def stored_terms(conn: Connection, tombstone_id: int) -> dict[str, set[str]] | None:
    row = conn.execute(select(StoreMeta.value).where(
        StoreMeta.key == TERMS_KEY.format(tombstone_id))).first()
    if row is None:
        return None
    try:
        doc = json.loads(str(row[0]))
        return {"words": set(doc.get("words", [])), "stems": set(doc.get("stems", []))}
    except (ValueError, AttributeError):
        return None
