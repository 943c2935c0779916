"""The demo store: a few weeks of an agent at work, built from ``assets/demo`` and told as if
it had just happened.

``build_demo`` copies every folder and file of ``assets/demo`` (but its README) next to the new
store, shifting every ISO-8601 timestamp and date in them by one offset, so that the story ends
about an hour before ``now``; each value keeps its format (a date stays a date, ``…T…Z`` keeps
its ``Z`` and its fraction digits). It then ingests the copy, whose files stay beside the store
(``<store>.demo-data/``): entries point at their source lines and the memory directory is the
one the store was imported from. ``proposals/`` is replayed through the approval gate
(``store.governance.replay``): a supersession chain made by approved proposals, a reinforcement
the auto-apply policy took, a rejection, and pending proposals that set off every check. It
never writes into a store that already holds records, and its default path is a fresh file of
its own, never ``$LCA_STORE``.

**The demo's own file.** ``build_demo`` writes a random token into the store
(``store_meta`` key ``demo.token``) and the same token into ``<store>.demo-data/demo-token``.
``demo_refusal`` says why a store is not the demo's own file (None when it is): the token in
the file must match the one in the folder beside it. A name or a path would not do: a person
may call their real store ``demo.db``, and a demo copied with its folder (as the tests do) is
still the demo. The marker is what the guided tour (``store.demo.tour``) checks before its
erase step, and before it starts at all: it never leads anyone to erase records of a real
store.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, timezone
from pathlib import Path

from store.core.assets import asset_path
from store.core.db import default_folder
from store.core.location import is_url, local_anchor, mask_url, not_a_folder
from store.core.errors import StoreError
from store.core.records import IngestReport
from store.core.settings import Settings
from store.core.vocab import Progress
from store.tour.marker import demo_data_dir, write_marker

STORY_ENDS_BEFORE_NOW = timedelta(hours=1)
PROPOSALS = "proposals"  # replayed through the approval gate, not ingested
SKIP = {"README.md", "LICENSE", "LICENSE.md"}
SQLITE_HEADER = b"SQLite format 3\x00"

# A date, optionally followed by a time (T or a space), seconds, a fraction and an offset.
ISO = re.compile(
    r"(?<![\d-])(?P<date>\d{4}-\d{2}-\d{2})"
    r"(?:(?P<sep>[T ])(?P<hm>\d{2}:\d{2})(?P<s>:\d{2})?(?P<frac>\.\d{1,6})?"
    r"(?P<tz>Z|[+-]\d{2}:\d{2})?)?(?![\d])")


class DemoError(StoreError):
    """The demo cannot be built where it was asked to be."""


@dataclass
class DemoResult:
    path: Path | str  # a file, or a server's URL
    data_dir: Path
    shift: timedelta
    story_end: datetime
    timestamps_shifted: int
    report: IngestReport

    def to_json(self) -> dict[str, object]:
        return {"path": mask_url(self.path) if isinstance(self.path, str) else str(self.path),
                "data_dir": str(self.data_dir),
                "shift_seconds": int(self.shift.total_seconds()),
                "story_end": self.story_end.isoformat().replace("+00:00", "Z"),
                "timestamps_shifted": self.timestamps_shifted, "ingest": self.report.to_json()}


# -- timestamps ---------------------------------------------------------------------------------
def _parse(m: re.Match[str]) -> datetime | None:
    try:
        day = date.fromisoformat(m["date"])
    except ValueError:
        return None
    if not m["hm"]:
        return datetime.combine(day, time(0, 0), UTC)
    hour, minute = int(m["hm"][:2]), int(m["hm"][3:])
    second = int(m["s"][1:]) if m["s"] else 0
    micro = int(m["frac"][1:].ljust(6, "0")) if m["frac"] else 0
    tz = m["tz"]
    if not tz or tz == "Z":
        zone: timezone = UTC
    else:
        sign = 1 if tz[0] == "+" else -1
        zone = timezone(sign * timedelta(hours=int(tz[1:3]), minutes=int(tz[4:6])))
    try:
        return datetime(day.year, day.month, day.day, hour, minute, second, micro, zone)
    except ValueError:
        return None


def _format(m: re.Match[str], dt: datetime) -> str:
    if not m["hm"]:
        return dt.date().isoformat()
    out = f"{dt.date().isoformat()}{m['sep']}{dt.hour:02d}:{dt.minute:02d}"
    if m["s"]:
        out += f":{dt.second:02d}"
    if m["frac"]:
        out += "." + f"{dt.microsecond:06d}"[: len(m["frac"]) - 1]
    return out + (m["tz"] or "")


def latest_timestamp(text: str) -> datetime | None:
    """The latest timestamp or date (a date counts as its midnight, UTC) in ``text``."""
    found = [dt for m in ISO.finditer(text) if (dt := _parse(m)) is not None]
    return max(found, default=None)


def shift_text(text: str, delta: timedelta) -> tuple[str, int]:
    """``text`` with every ISO-8601 timestamp and date moved by ``delta``; and how many."""
    count = 0

    def repl(m: re.Match[str]) -> str:
        nonlocal count
        dt = _parse(m)
        if dt is None:
            return m.group()
        count += 1
        return _format(m, dt + delta)

    return ISO.sub(repl, text), count


# -- where ---------------------------------------------------------------------------------------
# A private detail of the demo's transcripts (the user's e-mail), marked private at import.
PRIVATE_IN_TRANSCRIPTS = "dana.r@example.com"


def default_demo_path(now: datetime | None = None) -> Path:
    """A fresh file ``$XDG_DATA_HOME/lca-tui/demo-<UTC time>.db`` (never ``$LCA_STORE``)."""
    base = default_folder()
    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%d-%H%M%S")
    path = base / f"demo-{stamp}.db"
    n = 2
    while path.exists() or _data_dir(path).exists():
        path = base / f"demo-{stamp}-{n}.db"
        n += 1
    return path


def _data_dir(path: Path) -> Path:
    return demo_data_dir(path)


def _refuse_non_empty(target: Path | str, shown: str, instead: str) -> None:
    """Refuse a store (a file or a server database) that holds records already: the demo
    never writes into a non-empty store."""
    from store.facade import open_store

    store = open_store(target, Settings.load({"embed.backend": "fallback"}))
    try:
        stats = store.stats(with_embedder=False)
    finally:
        store.close()
    if stats.sessions or stats.entries or stats.memories:
        raise DemoError(
            f"{shown} already holds a store ({stats.sessions} sessions, {stats.entries} "
            f"entries, {stats.memories} memories): the demo never writes into a non-empty "
            f"store; {instead}")


def check_server_target(url: str) -> None:
    """Refuse a database on a server that holds records already: the demo never writes into
    a non-empty store."""
    _refuse_non_empty(url, mask_url(url), "name an empty database")


def check_target(path: Path) -> None:
    """Refuse ``$LCA_STORE`` and any file that is not an empty store: the demo never writes
    over records."""
    env_store = os.environ.get("LCA_STORE")
    if env_store and Path(env_store).expanduser().resolve() == path.resolve():
        raise DemoError(f"{path} is the store $LCA_STORE names: the demo never writes into it; "
                        "pick another path with --store, or leave --store out for a fresh file")
    if path.is_dir():
        raise DemoError(f"{path} is a directory: give --store a file path for the demo store")
    blocked = not_a_folder(path)
    if blocked:
        raise DemoError(blocked)
    if not path.parent.is_dir() and path.parent.resolve() != default_folder().resolve():
        raise DemoError(f"the folder {path.parent} does not exist: create it first, or leave "
                        "--store out for a fresh file in lca-tui's own folder")
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb") as fh:
        if fh.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
            raise DemoError(f"{path} exists and is not an lca-tui store: the demo will not "
                            "write over it; pick a new path with --store, or leave --store out")
    _refuse_non_empty(path, str(path), "pick a new path with --store, or leave --store out "
                      "for a fresh file")


# -- build ----------------------------------------------------------------------------------------
def prepare_data(target: Path, now: datetime, source: Path | None = None) -> tuple[timedelta,
                                                                                   datetime, int]:
    """Copy the demo data into ``target``, shifted so the story ends an hour before ``now``.

    Returns the shift, the new end of the story and how many values were shifted.
    """
    source = source or asset_path("demo")
    if not source.is_dir():
        raise DemoError(f"the demo data is missing: {source} is not a directory "
                        "(reinstall lca-tui)")
    files = sorted(p for p in source.rglob("*") if p.is_file() and not _skipped(p, source))
    texts = {p: p.read_text(encoding="utf-8") for p in files}
    ends = [dt for t in texts.values() if (dt := latest_timestamp(t)) is not None]
    if not ends:
        raise DemoError(f"no timestamps found in {source}: the demo data is damaged")
    end = max(ends)
    wanted_end = now.astimezone(UTC) - STORY_ENDS_BEFORE_NOW
    shift = timedelta(seconds=round((wanted_end - end).total_seconds()))
    shifted = 0
    for p, text in texts.items():
        out = target / p.relative_to(source)
        out.parent.mkdir(parents=True, exist_ok=True)
        new, n = shift_text(text, shift)
        shifted += n
        out.write_text(new, encoding="utf-8")
    return shift, end + shift, shifted


def _skipped(path: Path, root: Path) -> bool:
    rel = path.relative_to(root)
    return (len(rel.parts) == 1 and rel.name in SKIP) or path.suffix in {".pyc"} \
        or "__pycache__" in rel.parts


def build_demo(path: Path | str | None = None, *, now: datetime | None = None,
               settings: Settings | None = None, progress: Progress | None = None,
               source: Path | None = None,
               timer: Callable[[], float] | None = None) -> DemoResult:
    """Build the demo store at ``path`` (default: a fresh file, see ``default_demo_path``).
    ``timer`` is the store's (``StoreBase``): it measures the seeded recalls' latency."""
    now = now or datetime.now(UTC)
    store_path: Path | str
    if is_url(path):
        store_path = str(path)
        check_server_target(store_path)
        data_dir = _data_dir(local_anchor(store_path))
    else:
        store_path = Path(path).expanduser() if path else default_demo_path(now)
        check_target(store_path)
        data_dir = _data_dir(store_path)
    if data_dir.exists():
        raise DemoError(f"{data_dir} already exists: the demo keeps its shifted data files "
                        "there; remove it or pick another --store path")
    data_dir.mkdir(parents=True, mode=0o700)
    try:
        shift, story_end, shifted = prepare_data(data_dir, now, source)
    except BaseException:
        shutil.rmtree(data_dir, ignore_errors=True)
        raise
    from store.facade import open_store

    # the demo's story is fixed (its screens and tour show it as written): its own import
    # runs without the secrets detector, which would mark its dev passwords and .env secret
    settings = (settings or Settings.load()).with_overrides({"privacy.detect_secrets": False},
                                                            "the demo's fixed story")
    store = open_store(store_path, settings, timer=timer)
    try:
        inputs: list[Path | str] = sorted(p for p in data_dir.iterdir()
                                          if p.name != PROPOSALS)
        report = store.ingest(inputs, progress=progress)
        # the story: Dana marked the transcript lines holding her e-mail private, as her
        # contact memory is (a public recall never injects them; issue 12)
        if progress:
            progress("marking Dana's e-mail private in the transcripts", 0, 0)
        store.mark("private", match=PRIVATE_IN_TRANSCRIPTS)
        from store.governance.replay import replay_proposals

        replay_proposals(store, data_dir / PROPOSALS, progress=progress)
        from store.recall.run import seed_demo_traces

        # a few real recalls, so Recall has traces to show
        seed_demo_traces(store, now=story_end, progress=progress)  # within the story
        from store.health.incidents import seed_demo

        # one stored instance of each Appendix D incident
        seed_demo(store, data_dir, story_end, progress=progress)
        from store.governance.proposals import recheck_pending

        # the incidents add critical memories after the proposals were checked: the pending
        # ones are checked again so their budget figures are the store's
        # the person running the demo (identity.name, LCA_ACTOR or the OS account), never the
        # program's name (issue 22)
        recheck_pending(store, progress=progress)
        write_marker(store, data_dir)
        if not store.on_server:
            with store.read() as conn:
                # raw SQL: PRAGMA wal_checkpoint, connection control
                conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        store.close()
    return DemoResult(store_path, data_dir, shift, story_end, shifted, report)
