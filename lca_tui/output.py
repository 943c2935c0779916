"""Shared CLI plumbing: opening the store from arguments, JSON and Rich output, tables that fit
the terminal, progress on stderr, errors."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from rich import box
from rich.cells import cell_len
from rich.console import Console, RenderableType
from rich.segment import Segments
from rich.table import Table
from rich.text import Text

from lca_tui import collector
from store import SQL_INT_MAX, SQL_INT_MIN, Progress, clip_words, one_line, visible


def inert(value: object) -> Text:
    """A value that came from a file or the store (an id, a path, a name, text) as a one-line
    ``Text``: never read as markup, every control, bidi and zero-width character shown through
    ``store.core.textsafe`` (the app's escaping, shared). Tables call it for every ``str``
    cell; call it for any data you put in a cell yourself."""
    return Text(one_line("" if value is None else str(value)), end="")


class SafeConsole(Console):
    """A console for data: ``str`` arguments are printed through ``visible`` (markup and emoji
    codes are off), so no transcript can write to the terminal or style the output."""

    def print(self, *objects: Any, **kwargs: Any) -> None:  # type: ignore[override]
        kwargs.setdefault("markup", False)
        kwargs.setdefault("emoji", False)
        super().print(*(visible(o) if isinstance(o, str) else o for o in objects), **kwargs)


class SafeTable(Table):
    """A Rich table whose ``str`` cells go through ``inert``: data is never markup."""

    def add_row(self, *renderables: Any, **kwargs: Any) -> None:  # type: ignore[override]
        super().add_row(*(inert(r) if isinstance(r, str) else r for r in renderables), **kwargs)


err_console = SafeConsole(stderr=True, highlight=False, markup=False, emoji=False)

NOT_A_TERMINAL_WIDTH = 160
PROGRESS_SECONDS = 3.0
"""When stderr is not a terminal, a progress line at most this often (and at each new step)."""


def sql_int(text: str) -> int:
    """An argparse type: an integer the store can hold (-2^63 … 2^63-1), else a clear
    error naming the value."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if not SQL_INT_MIN <= value <= SQL_INT_MAX:
        raise argparse.ArgumentTypeError(f"{text[:40]}{'…' if len(text) > 40 else ''} is out "
                                         "of range (integers from -2^63 to 2^63-1)")
    return value


def console() -> Console:
    """Stdout for tables; when it is not a terminal (a pipe, a file) tables get 160 columns
    (or $COLUMNS) instead of Rich's 80, so ids and paths are not folded."""
    if sys.stdout.isatty():
        return SafeConsole(highlight=False, markup=False, emoji=False)
    return SafeConsole(highlight=False, markup=False, emoji=False,
                       width=int(os.environ.get("COLUMNS") or 0) or NOT_A_TERMINAL_WIDTH)


def fail(message: str, code: int = 2) -> int:
    """One error line on stderr, never wrapped: a path in it must stay copyable (and any
    data in it shown through ``visible``)."""
    sys.stderr.write(f"lca-tui: {visible(message)}\n")
    sys.stderr.flush()
    return code


def _finite(value: Any) -> Any:
    """``value`` with every NaN / infinite float as None: JSON has no such numbers, and a
    script's parser rejects Python's ``NaN`` / ``Infinity``."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def print_json(data: Any) -> None:
    """One JSON document on stdout (strict JSON: a non-finite number is printed as null)."""
    sys.stdout.write(json.dumps(_finite(data), indent=2, ensure_ascii=False, default=str,
                                allow_nan=False) + "\n")


class FilePlan(Protocol):
    """A plan of ``hooks install`` / ``mcp install`` (or uninstall) for one file."""

    @property
    def changed(self) -> bool: ...

    changes: list[str]


def print_file_plan(plan: FilePlan, path: Path, written: list[Path], dry_run: bool,
                    nothing: str) -> None:
    """What an install or uninstall did to one client file (or, ``dry_run``, would do);
    ``nothing``: what the file holds when there is nothing to change."""
    out = console()
    if not plan.changed:
        out.print(f"{path}: nothing to change ({nothing})", markup=False)
        return
    for change in plan.changes:
        out.print(f"{'would ' if dry_run else ''}{change}", markup=False)
    if dry_run:
        out.print(f"dry run: {path} not changed", markup=False)
    else:
        backup = next((p for p in written if p.name.endswith(".lca-tui.bak")), None)
        out.print(f"wrote {path}" + (f" (backup {backup})" if backup else ""), markup=False)


def settings_from(args: argparse.Namespace) -> Any:
    from store import Settings, parse_assignment

    given = [*(getattr(args, "overrides_top", None) or []),
             *(getattr(args, "overrides", None) or [])]
    overrides = dict(parse_assignment(a) for a in given)
    if getattr(args, "theme", None):
        overrides["app.theme"] = args.theme
    if getattr(args, "read_only", False):
        overrides["store.read_only"] = "true"
    return Settings.load(overrides)


def open_from(args: argparse.Namespace, **kwargs: Any) -> Any:
    """The store named by ``--store`` / ``LCA_STORE`` / the default path (opened, or not: the
    garbage collector is on again after, if ``lca-tui`` paused it, ``lca_tui.collector``)."""
    from store import open_store

    try:
        return open_store(getattr(args, "store", None), settings_from(args), **kwargs)
    finally:
        collector.settle()


@contextmanager
def listings_from(args: argparse.Namespace) -> Iterator[Any]:
    """The store for a command that only lists (``stats``, ``sessions``, ``memories``,
    ``proposals``, ``audit``): a store file read without the ORM (``store.open_listings``),
    answering as the ``Store`` does; else (a server, a store to migrate, none yet) the
    ``Store`` itself."""
    from store import open_listings

    reader = open_listings(getattr(args, "store", None), settings_from(args))
    if reader is None:  # (open_from turns the collector back on once it is open)
        with store_from(args) as store:
            yield store
        return
    collector.settle()  # as open_from does (and main, when the lean open raised)
    try:
        yield reader
    finally:
        reader.close()


def store_url(args: argparse.Namespace) -> str | None:
    """The PostgreSQL server the command names (``--store``, ``$LCA_STORE``, the ``store.url``
    setting), or None for a store file."""
    import os

    from store import is_url

    given = getattr(args, "store", None) or os.environ.get("LCA_STORE")
    if given:
        return str(given) if is_url(given) else None
    url = str(settings_from(args)["store.url"]).strip()
    return url or None


def store_path(args: argparse.Namespace) -> Path:
    """The store file the command names: ``--store``, else ``$LCA_STORE`` or the default; for a
    store on a server, this machine's folder for its local files (``store.local_anchor``)."""
    from store import default_store_path, local_anchor

    url = store_url(args)
    if url is not None:
        return local_anchor(url)
    given = getattr(args, "store", None)
    return Path(given).expanduser() if given else default_store_path()


def require_store(args: argparse.Namespace, what: str, hint: str = "") -> None:
    """Refuse a store file that does not exist, for a command (``what``) that only reads or
    repairs one: opening would create an empty store at a mistyped path and report on it."""
    from store import StoreError

    if store_url(args) is not None:
        return  # a server: opening it says whether it is there
    path = store_path(args)
    if not path.exists():  # a folder or an unreadable file: opening says what is wrong
        raise StoreError(f"no store at {path}: {what} reads an existing store (check --store "
                         "or $LCA_STORE; `lca-tui ingest` or `lca-tui demo` makes one)" + hint)


@contextmanager
def model_meanwhile(args: argparse.Namespace, wanted: bool = True) -> Iterator[None]:
    """For a command no daemon answered that will embed (``recall``, ``search``): the model
    loads on a thread of its own from now on, while this one imports and opens the store
    (onnxruntime builds its session without holding the GIL), and the store takes it when it
    first asks (``store.load_early``); once the block ends, a load nothing took
    (the command failed first) is waited for. ``wanted`` False: nothing begun."""
    from store import embedder_key, load_early, settle_early, would_open

    key = None
    if wanted:
        settings = settings_from(args)
        if would_open(getattr(args, "store", None), settings):  # not for a store that
            key = embedder_key(settings)  # will be refused
            load_early(key)
    try:
        yield
    finally:
        if key is not None:
            settle_early(key)


@contextmanager
def store_from(args: argparse.Namespace, **kwargs: Any) -> Iterator[Any]:
    store = open_from(args, **kwargs)
    try:
        yield store
    finally:
        store.close()


# -- tables ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Col:
    """A table column. ``whole``: its values (ids, paths, times, numbers) are never wrapped or
    cut — the table drops other columns first. ``drop``: when the table is too wide, columns
    with the highest ``drop`` go first; 0 is never dropped. ``min_width``: the narrowest a
    wrapping column may get before it is dropped instead."""

    header: str
    whole: bool = False
    drop: int = 0
    justify: str = "left"
    min_width: int = 12


def col(header: str, *, whole: bool = False, drop: int = 0, right: bool = False,
        min_width: int = 12) -> Col:
    return Col(header, whole, drop, "right" if right else "left", min_width)


class Listing:
    """Rows for a table that fits the console: columns whose values must stay whole get their
    full width, and when that does not fit, the least important columns are left out (and a
    caption says which). Cells are strings (taken literally, never as markup) or renderables
    such as ``Text`` — whatever escaping a caller applies stays the caller's."""

    GAP = 3  # a column's padding and separator in the style below

    def __init__(self, *columns: Col | str, title: str | None = None) -> None:
        self.columns = [c if isinstance(c, Col) else Col(c) for c in columns]
        self.title = title
        self.rows: list[tuple[RenderableType, ...]] = []

    def add_row(self, *cells: RenderableType | None) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"{len(cells)} cells for {len(self.columns)} columns")
        self.rows.append(tuple(inert(c) if isinstance(c, str) else
                               Text("") if c is None else c for c in cells))

    def __len__(self) -> int:
        return len(self.rows)

    def _need(self, out: Console, index: int) -> int:
        """The width column ``index`` needs: all of its widest value when it is kept whole,
        else its ``min_width`` — but never less than its longest word, so no token is cut."""
        column = self.columns[index]
        widest = word = max((cell_len(w) for w in column.header.split()), default=0)
        for row in self.rows:
            value = row[index]
            if isinstance(value, Text):
                plain = value.plain
                widest = max(widest, max((cell_len(line) for line in plain.split("\n")),
                                         default=0))
                word = max(word, max((cell_len(w) for w in plain.split()), default=0))
            else:
                measured = out.measure(value)
                widest, word = max(widest, measured.maximum), max(word, measured.minimum)
        if column.whole:
            return max(widest, cell_len(column.header))
        return max(min(widest, column.min_width), word)

    def kept(self, out: Console) -> list[int]:
        """The indexes of the columns shown at ``out``'s width: the least important droppable
        columns go until the rest fit (or nothing droppable is left)."""
        keep = list(range(len(self.columns)))
        need = {i: self._need(out, i) for i in keep}
        while len(keep) > 1:
            droppable = [i for i in keep if self.columns[i].drop > 0]
            if self.width_of(keep, need) <= out.width or not droppable:
                break
            keep.remove(max(droppable, key=lambda i: (self.columns[i].drop, i)))
        return keep

    def width_of(self, keep: list[int], need: dict[int, int]) -> int:
        """The narrowest the table of columns ``keep`` can be without cutting a value."""
        return sum(need[i] for i in keep) + self.GAP * (len(keep) - 1)

    def note(self, out: Console, keep: list[int]) -> str | None:
        """The line naming every column left out, or None."""
        left = [self.columns[i].header for i in range(len(self.columns)) if i not in keep]
        if not left:
            return None
        return (f"not shown at {out.width} columns: {', '.join(left)} (a wider terminal or "
                "--json shows them)")

    def render(self, out: Console, keep: list[int] | None = None) -> Table:
        """The table of the columns ``keep`` (default: those that fit): a whole column gets
        exactly its widest value, a free-text column at least its ``min_width``."""
        keep = self.kept(out) if keep is None else keep
        t = Table(title=self.title, box=box.SIMPLE_HEAD, show_edge=False,
                  pad_edge=False, header_style="bold", title_justify="left",
                  title_style="bold")
        for i in keep:
            c = self.columns[i]
            need = self._need(out, i)
            if c.whole:
                t.add_column(c.header, justify=c.justify,  # type: ignore[arg-type]
                             no_wrap=True, overflow="fold", width=need)
            else:
                t.add_column(c.header, justify=c.justify,  # type: ignore[arg-type]
                             overflow="fold", min_width=need)
        for row in self.rows:
            t.add_row(*(row[i] for i in keep))
        return t

    def print(self, out: Console | None = None) -> None:
        """The table, then a note naming the columns left out. When even the kept columns do
        not fit, the table is drawn wider than the console (the terminal wraps the lines)
        rather than cutting an id, a path or a time."""
        out = out or console()
        keep = self.kept(out)
        need = {i: self._need(out, i) for i in keep}
        width = max(out.width, self.width_of(keep, need))
        rendered = self.render(out, keep)
        if width > out.width:
            for line in out.render_lines(rendered, out.options.update_width(width),
                                         pad=False, new_lines=True):
                out.print(Segments(line), soft_wrap=True, crop=False)
        else:
            out.print(rendered)
        note = self.note(out, keep)
        if note:
            out.print(Text(note, style="dim"), overflow="fold")  # wrapped at words, not cut


def table(*columns: str, title: str | None = None) -> Table:
    """A plain Rich table whose cells fold (for free-text tables; prefer ``Listing``); its
    ``str`` cells go through ``inert``."""
    t = SafeTable(title=title, show_lines=False, header_style="bold")
    for c in columns:
        t.add_column(c, overflow="fold")
    return t


# -- progress ----------------------------------------------------------------------------------


BAR_COLUMNS = 40
"""What the bar's own columns (spinner, bar, counts, elapsed) take; the label gets the rest."""


def bar_label(what: str, label: str, width: int) -> str:
    """``what: label`` fit to ``width`` columns for the progress bar: a long file name keeps
    its head and extension (``4ca67353….jsonl``), then the whole is cut at a word with an
    ellipsis — a bar line never wraps at 80 columns."""
    words = [w if len(w) <= 24 else _short_name(w) for w in one_line(label).split(" ")]
    return clip_words(f"{what}: {' '.join(words)}", max(12, width))


def _short_name(word: str) -> str:
    tail = ":" if word.endswith(":") else ""
    core = word.rstrip(":")
    stem, dot, ext = core.rpartition(".")
    if not dot or len(ext) > 6:
        stem, ext = core, ""
    return f"{stem[:8]}…{'.' + ext if ext else ''}{tail}"


@contextmanager
def progress_on_stderr(what: str, interval: float | None = None) -> Iterator[Progress]:
    """A ``progress(label, done, total)`` callback for long work. On a terminal: a Rich bar on
    stderr (a spinner while ``total`` is 0, e.g. while the model loads; its elapsed time ticks
    on its own), its label cut to fit. Otherwise (a log, CI) a line at once, at most one every
    ``interval`` seconds (default ``PROGRESS_SECONDS``) as the work reports, and — from a timer
    — a heartbeat line with the elapsed time whenever a step blocks longer than that (a model
    load, one big file), so a long import is never silent and never floods the log."""
    every = PROGRESS_SECONDS if interval is None else interval
    if err_console.is_terminal:
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn,
                                   TextColumn, TimeElapsedColumn)

        with Progress(SpinnerColumn(), TextColumn("{task.description}"),
                      BarColumn(bar_width=None), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err_console, transient=True) as bar:
            task = bar.add_task(bar_label(what, "starting", err_console.width - BAR_COLUMNS),
                                total=None)

            def update(label: str, done: int, total: int) -> None:
                bar.update(task, completed=done, total=total or None,
                           description=bar_label(what, label,
                                                 err_console.width - BAR_COLUMNS))

            yield update
        return
    heartbeat = _Heartbeat(what, every)
    heartbeat.start()
    try:
        yield heartbeat.report
    finally:
        heartbeat.stop()


class _Heartbeat:
    """Progress lines on a stderr that is not a terminal: the work's reports, rate-limited,
    and a timer thread that repeats the current step (with the time it has taken so far)
    whenever nothing was written for ``every`` seconds."""

    def __init__(self, what: str, every: float) -> None:
        self.what, self.every = what, every
        self.started = time.monotonic()
        self.state: tuple[str, int, int] = ("starting", 0, 0)
        self.step_started = self.started
        self.written: float | None = None
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._beat, name=f"progress-{what}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.done.set()
        self.thread.join(timeout=5)

    def report(self, label: str, done: int, total: int) -> None:
        now = time.monotonic()
        with self.lock:
            if label != self.state[0]:
                self.step_started = now
            self.state = (label, done, total)
            if self.written is None or now - self.written >= self.every:
                self._write(now, beat=False)

    def _beat(self) -> None:
        while not self.done.wait(min(self.every / 4, 0.5)):
            now = time.monotonic()
            with self.lock:
                if now - (self.written or self.started) >= self.every:
                    self._write(now, beat=True)

    def _write(self, now: float, *, beat: bool) -> None:
        label, done, total = self.state
        figure = f" {done:,} of {total:,} ({100 * done // total} %)" if total else "…"
        still = f" (still working, {now - self.step_started:.0f} s)" if beat else ""
        sys.stderr.write(f"lca-tui: {self.what}: {visible(label)}{figure}{still}\n")
        sys.stderr.flush()
        self.written = now


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document")

