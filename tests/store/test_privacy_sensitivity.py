"""Sensitivity in recall: the demo's private detail (an email) is never injected into a public
recall."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text

from tests.helpers_privacy import EMAIL, _open


def test_the_demo_email_is_never_injected_into_a_public_recall(demo_path: Path) -> None:
    """The issue's motivating leak: the demo user's e-mail, in a transcript, is private (the
    demo marks it as its story says), so a public recall injects none of it while a private
    one still may."""
    query = "what is Dana's email address"
    with _open(demo_path) as store:
        with store.read() as conn:
            levels = {r[0] for r in conn.execute(text(
                "SELECT sensitivity FROM entry WHERE replace(content, :e, '') <> content"),
                {"e": EMAIL})}
        assert levels == {"private"}
        public = store.recall(query, channel="public")
        assert not any(EMAIL in (i.text or "") for i in public.items)
        held = {c.source_id for c in public.trace.candidates
                if c.source_type == "entry" and c.decision == "policy_filtered"}
        assert held  # the entries were candidates and the channel rule held them back
        private = store.recall(query, channel="private")
        assert not any(c.source_id in held and c.decision == "policy_filtered"
                       for c in private.trace.candidates if c.source_type == "entry")
