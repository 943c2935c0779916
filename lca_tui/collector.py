"""Python's cyclic garbage collector while the app, a hand-run command or a hook starts.

Opening the app allocates a few hundred thousand objects that live as long as it does
(Textual's and Rich's modules, the screens' classes, SQLAlchemy's mappers) and almost no
garbage; so does each screen the first time it shows its data (its module, its widgets, the
lines they drew: screens are kept). The collector, left as Python sets it, runs over and over
during those imports and finds nothing, and every later full collection walks all of them
again: on the demo store (a quiet run, ``docs/performance.md``), collections took 70–80 ms
before the first frame and 2.5–2.8 s of one bench run in all, a full one up to half a second,
in the middle of a screen switch.

So ``lca-tui`` pauses the collector before it imports the app (``pause``); once the store is
open (or could not be), the app freezes what is alive — moved out of every later collection:
freed by reference counting when dropped, but a cycle among them never — and turns the
collector back on (``settle``); and each screen, once it first shows its data, freezes what is
alive again (``keep``). What is frozen that way includes the cyclic garbage not collected yet:
on the demo store 28,000–36,000 objects, 3–4 MB, over one open and eight screens (a review's
count), kept until the app exits — bounded (once at the start, once per screen), against a
full collection of 3–55 ms before each freeze to reclaim it. Python's
thresholds are left as they are: a young generation of 10,000 allocations instead of 700 made
the collections fewer but put a middle generation's, up to 150 ms, inside a filter
keystroke.

A command a person waits for (``cli.PAUSED``: the listings, ``health``, ``search``, ``recall``,
``approve`` …) and a hook worked out in-process do the same, run as a process of their own:
the collector paused from the start (imports, the ORM, the store's opening), back on with
what was alive frozen once the store is open (``lca_tui.output.open_from`` and
``listings_from``, ``store.handle_hook``'s ``opened``), or when the command ends.

Only a process that paused the collector here has it tuned so: an app made in a test (or by
any caller of ``make_app``) leaves the collector as it found it — freezing there would keep
for good the garbage earlier tests left.
"""

from __future__ import annotations

import gc
import threading

_lock = threading.Lock()
_paused = False
_owned = False


def pause() -> None:
    """Pause the collector until ``settle`` (if it is on: a caller that turned it off keeps it
    off, and nothing here touches it)."""
    global _paused
    with _lock:
        if gc.isenabled() and not _owned:
            gc.disable()
            _paused = True


def settle() -> None:
    """The app has started: freeze every object alive and turn the collector back on — only
    if ``pause`` turned it off (once; later calls do nothing)."""
    global _paused, _owned
    with _lock:
        if not _paused:
            return
        _paused, _owned = False, True
        gc.freeze()
        gc.enable()


def keep() -> None:
    """What is alive now lives as long as the app (a screen's first data shown): out of later
    collections — only in a process whose collector ``settle`` turned back on."""
    with _lock:
        if _owned:
            gc.freeze()


def paused() -> bool:
    """Whether ``pause`` has the collector off now."""
    return _paused
