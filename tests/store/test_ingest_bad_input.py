"""Bad input of every shape is reported with its place and reason; everything else lands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from store import Store
from store.core.errors import NotFound, StoreError
from store.core.writes import NewEntry, NewSession
from tests.conftest import CLAUDE_CODE, make_store, needs_shared_data, store_target

# Empty without ../shared/data: the tests that read GOOD are then skipped, and the stand-in
# below only lets the parametrized lines be built at collection.
GOOD = ((CLAUDE_CODE / "short.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
        if CLAUDE_CODE.is_dir() else [])


def _line(**changes: object) -> str:
    obj = json.loads(next((ln for ln in GOOD if '"type":"assistant"' in ln),
                          '{"type":"assistant"}'))
    obj.update(changes)
    return json.dumps(obj) + "\n"


@needs_shared_data
@pytest.mark.parametrize("bad", [
    '{"type": "user", "sessionId": "s", "uuid": "u1", "message": {"content": "bad \\ud800"}}\n',
    '{"type": [], "sessionId": "s"}\n',
    _line(uuid={"an": "object"}),
    _line(parentUuid=[1, 2]),
    _line(uuid=10 ** 30),
    _line(message={"role": "assistant", "id": {"x": 1}, "content": [{"type": ["x"]}]}),
    '{"type": "system", "subtype": "compact_boundary", "sessionId": "s", "compactMetadata": [1]}\n',
    "[" * 100_000 + "\n",
])
def test_wrong_shaped_line_is_reported_and_the_rest_lands(store: Store, tmp_path: Path,
                                                          bad: str) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(GOOD[:4]) + bad + "".join(GOOD[4:]), encoding="utf-8")
    report = store.ingest([path])
    good_entries = 11
    assert report.entries_added >= good_entries
    assert all(e.line == 5 for e in report.errors), report.errors
    assert store.stats().entries == report.entries_added


@needs_shared_data
def test_null_text_is_empty_not_none(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "n.jsonl"
    path.write_text(_line(message={"role": "assistant", "id": "m1",
                                   "content": [{"type": "text", "text": None}]}), encoding="utf-8")
    store.ingest([path])
    with store.read() as conn:
        assert conn.exec_driver_sql("SELECT content FROM entry").scalar_one() == ""


@needs_shared_data
def test_bad_memory_values_cost_only_their_file(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("# index\n", encoding="utf-8")
    bad = {"feedback_date.md": "created: 2024-02-30", "feedback_inf.md": "hits: .inf",
           "feedback_big.md": "hits: 100000000000000000000000",
           "feedback_role.md": "role: [a, b]", "feedback_loop.md": "a: &a [*a]"}
    for name, line in bad.items():
        (folder / name).write_text(f"---\nname: {name}\ntype: feedback\n{line}\n---\nbody\n",
                                   encoding="utf-8")
    (folder / "feedback_good.md").write_text(
        "\ufeff---\nname: good\ntype: feedback\ncritical: true\n---\nkept\n", encoding="utf-8")
    (folder / "s.jsonl").write_text("".join(GOOD), encoding="utf-8")
    report = store.ingest([folder])
    names = {m.name for m in store.memories()}
    assert "good" in names and len(names) == 6  # every file recorded
    good = next(m for m in store.memories() if m.name == "good")
    assert good.loadable and good.critical  # a BOM does not hide the front matter
    assert report.entries_added == 11
    date_errors = [e for e in report.errors if e.path.endswith("feedback_date.md")]
    assert date_errors and "cannot read" in date_errors[0].reason


@needs_shared_data
def test_errors_past_the_listing_limit_are_counted(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    path.write_text("".join(GOOD) + "garbage\n" * 250 + "tail-without-newline",
                    encoding="utf-8")
    report = store.ingest([path])
    assert report.entries_added == 11
    assert len(report.errors) == 101
    assert report.errors[-1].reason == "150 more bad lines in this file were not listed"
    assert any("no newline" in n for n in report.notes)


@needs_shared_data
def test_bom_at_the_start_of_a_jsonl_file(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "".join(GOOD).encode("utf-8"))
    report = store.ingest([path])
    assert report.errors == [] and report.entries_added == 11


@needs_shared_data
def test_symlinked_folders_are_followed_once_and_loops_reported(store: Store,
                                                                tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    os.symlink(CLAUDE_CODE, root / "linked")
    os.symlink(root, root / "linked-again")  # a folder cycle
    os.symlink(root / "self.jsonl", root / "self.jsonl")  # a link loop
    report = store.ingest([root])
    assert report.entries_added == 723
    assert [(Path(e.path).name, e.reason) for e in report.errors] == [
        ("self.jsonl", "symlink loop")]


def test_session_prefix_must_be_unique(store: Store) -> None:
    for sid in ("ab", "abc", "abd"):
        store.append_entries(NewSession(sid, "api"), [NewEntry("user", sid, f"api:{sid}",
                                                               source_offset=0)])
    assert store.session("ab").id == "ab"  # exact id wins
    assert store.session("abc").id == "abc"
    with pytest.raises(NotFound, match="names 3 sessions"):
        store.session("a")
    with pytest.raises(NotFound):
        store.session("")


@needs_shared_data
def test_store_option_before_the_command(tmp_path: Path) -> None:
    target = tmp_path / "before.db"
    env = dict(os.environ, LCA_STORE=str(tmp_path / "other.db"))
    exe = [sys.executable, "-m", "lca_tui.cli"]
    subprocess.run(exe + ["--store", str(target), "ingest", str(CLAUDE_CODE / "short.jsonl")],
                   check=True, env=env, capture_output=True)
    out = subprocess.run(exe + ["--store", str(target), "--set", "search.limit=3", "config",
                                "--json"], check=True, env=env, capture_output=True, text=True)
    config = json.loads(out.stdout)
    assert config["store"] == str(target)
    assert config["settings"]["search.limit"] == {
        "value": 3, "source": "command line", "doc": config["settings"]["search.limit"]["doc"]}
    assert target.exists() and not (tmp_path / "other.db").exists()


@pytest.mark.sqlite_only("a file that is not a SQLite database given as the store: a path "
                         "names a file store, never a server's")
def test_not_a_store_is_a_clear_error(tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("hello, not a database" * 100, encoding="utf-8")
    for path in (junk, tmp_path):
        out = subprocess.run([sys.executable, "-m", "lca_tui.cli", "--store", str(path),
                              "stats"], capture_output=True, text=True)
        assert out.returncode == 2 and "Traceback" not in out.stderr
        assert str(path) in out.stderr
    with pytest.raises(StoreError):
        make_store(junk)


@needs_shared_data
def test_a_writer_waits_for_another_writer(store: Store, tmp_path: Path) -> None:
    holding = threading.Event()
    release = threading.Event()

    def hold_lock() -> None:
        other = make_store(store.opened_as)
        with other.write():
            holding.set()
            release.wait(10)
        other.close()

    t = threading.Thread(target=hold_lock)
    t.start()
    holding.wait(10)
    threading.Timer(0.5, release.set).start()
    report = store.ingest([CLAUDE_CODE / "short.jsonl"])  # blocks until the lock is free
    t.join()
    assert report.entries_added == 11


@needs_shared_data
def test_other_embedders_vectors_are_flagged_and_ignored(tmp_path: Path) -> None:
    from store.core.embed import HashEmbedder

    class Other(HashEmbedder):
        name = "some-other-model"

    first = Store(store_target(tmp_path / "mix.db"), embedder=Other())
    first.ingest([CLAUDE_CODE / "short.jsonl"])
    first.close()
    second = make_store(tmp_path / "mix.db")
    info = second.stats().embedder
    assert info.degraded and "another model" in (info.reason or "")
    assert second.search("phoenix server", 5, "semantic") == []
    assert second.search("phoenix server", 5, "fts")
    second.close()


@needs_shared_data
def test_reindex_refuses_to_replace_model_vectors_with_fallback(tmp_path: Path) -> None:
    from store.core.embed import HashEmbedder
    from store.core.settings import Settings

    class Real(HashEmbedder):
        name = "all-MiniLM-L6-v2-int8"
        degraded = False

    s = Store(tmp_path / "r.db", embedder=Real())
    s.ingest([CLAUDE_CODE / "short.jsonl"])
    s.close()
    auto = Settings.load({"embed.backend": "auto"})  # given, not set in the environment
    broken = Store(tmp_path / "r.db", auto, embedder=HashEmbedder("model could not load: test"))
    with pytest.raises(StoreError, match=r"would replace 10 chunks made by the real model"):
        broken.reindex()
    broken.close()


def test_session_spans_its_entries_whoever_wrote_them(store: Store) -> None:
    store.append_entries(NewSession("live", "api", started_at="2026-10-01T10:00:00.000Z"),
                         [NewEntry("user", "first", "api:live", source_offset=0,
                                   ts="2026-10-01T10:00:00.000Z")])
    store.append_entries(NewSession("live", "api"),
                         [NewEntry("user", "later", "api:live", source_offset=1,
                                   ts="2026-11-29T10:00:00.000Z")])
    s = store.session("live")
    assert (s.started_at, s.ended_at) == ("2026-10-01T10:00:00.000Z", "2026-11-29T10:00:00.000Z")


def test_bidi_and_control_characters_are_made_visible() -> None:
    from store.core.textsafe import one_line, visible

    assert visible("a\x1b[31mb\u202etxt.exe\u202c\tc\nd\x07") == (
        "a\\x1b[31mb\\u202etxt.exe\\u202c\tc\nd\\x07")
    assert one_line("x" * 10_000_000, 10) == "x" * 9 + "…"
    assert one_line("a\nb", 10) == "a ⏎ b"


def test_closing_while_another_thread_watches_is_safe(tmp_path: Path) -> None:
    for _ in range(50):
        s = make_store(tmp_path / "race.db")
        s.data_version()
        stop = threading.Event()

        def spin(store: Store = s, done: threading.Event = stop) -> None:
            while not done.is_set():
                store.data_version()

        t = threading.Thread(target=spin)
        t.start()
        s.close()
        stop.set()
        t.join()
        assert s.data_version() == s.data_version()  # closed: no longer changes, no crash


def test_search_withholds_secret_memory_text(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    folder.mkdir()
    (folder / "reference_creds.md").write_text(
        "---\nname: creds\ntype: reference\nsensitivity: secret\n---\n"
        "The staging vault path is secret/ledgerline/staging.\n", encoding="utf-8")
    store.ingest([folder])
    hits = store.search("staging vault path", 5)
    assert hits and all(h.masked and "ledgerline" not in h.text for h in hits)
    assert hits[0].memory_name == "creds"
