"""The base of every store screen: load in a worker, show in the main thread, follow the store.

A screen subclasses ``StoreScreen`` and implements ``load_data()`` (runs in a thread worker,
returns plain data, never touches a widget) and ``show_data(data)`` (runs on the main thread).
While the screen is the one on top, a timer asks the store for ``PRAGMA data_version`` in a thread
worker every ``app.refresh_seconds``; when it moved — a harness or another ``lca-tui`` committed —
the screen reloads. A screen in the background (another mode, or under a modal) is not polled;
it checks once when it comes back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.message import Message
from textual.screen import Screen
from textual.worker import Worker, WorkerState

if TYPE_CHECKING:
    from lca_tui.app import LcaApp


class StoreScreen(Screen[None]):
    """A screen that reads the store through workers and reloads when the store changes."""

    HELP: ClassVar[str] = ""
    """What the screen shows and how to use it (the ``?`` modal prints it above the keys)."""

    @dataclass
    class Loaded(Message):
        """A load worker finished: ``data`` is what ``load_data`` returned."""

        data: Any
        version: int

    @dataclass
    class VersionSeen(Message):
        """The store's data_version as the watch worker last read it."""

        version: int

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._seen_version: int | None = None
        self._load_pending = False
        self.loads = 0
        """How many loads have been shown (tests wait on it)."""

    @property
    def lca(self) -> LcaApp:
        return self.app  # type: ignore[return-value]

    # -- to implement --------------------------------------------------------------------
    def load_data(self) -> Any:
        """Read what the screen shows (in a worker thread: no widgets here)."""
        return None

    def show_data(self, data: Any) -> None:
        """Put loaded data on screen (main thread)."""

    # -- lifecycle -----------------------------------------------------------------------
    def on_mount(self) -> None:
        self.set_interval(self.lca.refresh_seconds, self._tick, name="store-watch")
        self.reload()

    def on_screen_resume(self) -> None:
        if self._seen_version is not None:
            self._check_version()

    def reload(self) -> None:
        """Load again (in a worker); the latest request wins."""
        self._load_pending = True
        self._load()

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load(self) -> None:
        version = self.lca.data_version()
        self.lca.follow_erasures()
        data = self.load_data()
        self.post_message(self.Loaded(data, version))

    @on(Loaded)
    def _on_loaded(self, message: Loaded) -> None:
        message.stop()
        self._seen_version = message.version
        self._load_pending = False
        self.show_data(message.data)
        self.loads += 1

    # -- following the store ---------------------------------------------------------------
    def _tick(self) -> None:
        if self.app.screen is not self or self._load_pending:
            return
        self._check_version()

    @work(thread=True, exclusive=True, group="watch", exit_on_error=False)
    def _check_version(self) -> None:
        self.post_message(self.VersionSeen(self.lca.data_version()))

    @on(VersionSeen)
    def _on_version(self, message: VersionSeen) -> None:
        message.stop()
        if self._seen_version is not None and message.version != self._seen_version \
                and not self._load_pending:
            self.reload()

    # -- errors ------------------------------------------------------------------------------
    @on(Worker.StateChanged)
    def _on_worker_state(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR:
            self._load_pending = False
            error = event.worker.error
            self.notify(f"{type(error).__name__}: {error}", title="lca-tui: a worker failed",
                        severity="error", markup=False, timeout=10)
            self.show_error(event.worker.group, error)

    def show_error(self, group: str, error: BaseException | None) -> None:
        """Show a failed worker's error where its result would have gone (optional)."""
