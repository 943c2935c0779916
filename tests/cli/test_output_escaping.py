"""The CLI's text output never lets a transcript talk to the terminal. Ids, tool
names, file names and text holding ESC/OSC sequences, bidi and zero-width characters and Rich
markup are printed inert by ``sessions``, ``entries``, ``search``, ``traces``, ``context`` and
``ingest`` (its problem table too), with the app's escaping function."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lca_tui.cli import main
from store.core.textsafe import visible

OSC_TITLE = "\x1b]0;pwned\x07"
OSC_CLIPBOARD = "\x1b]52;c;ZWNobyBoaQ==\x07"
SID = f"[b]S[/b]{OSC_TITLE}sess"
AGENT = "[/]"
TOOL = f"[red]Bash[/red]{OSC_CLIPBOARD}"
INVISIBLE = ("\u3164", "\u115f", "\u00ad", "\U000e0041", "\U000e007f", "\ufe00", "\ufe0f")
TEXT = ("hit " + "".join(f"{c}{n}" for n, c in enumerate(INVISIBLE))
        + " [/] text [bold]loud[/bold] \x1b[31mred\x1b[0m a\u061cb c\u200bd e\u2028f")


def _lines() -> list[dict]:
    base = {"sessionId": SID, "timestamp": "2026-01-01T00:00:00Z"}
    return [
        dict(base, type="user", uuid="u1", message={"role": "user", "content": TEXT}),
        dict(base, type="assistant", uuid="u2", message={
            "id": "m1", "role": "assistant", "usage": {"input_tokens": 1200},
            "content": [{"type": "tool_use", "id": "t1", "name": TOOL,
                         "input": {"command": TEXT}}]}),
        dict(base, type="assistant", uuid="u3", agentId=AGENT, message={
            "id": "m2", "role": "assistant", "usage": {"input_tokens": 900},
            "content": [{"type": "text", "text": TEXT}]}),
        dict(base, type="user", uuid="u4", message="[/]"),  # a problem whose reason has [/]
        dict(base, type="[/]", uuid="u5"),  # a type not known here: a note naming it
    ]


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    name = folder / f"[b]x[i]{OSC_TITLE}.jsonl"  # no "/" in a file name
    name.write_text("".join(json.dumps(line) + "\n" for line in _lines()))
    return folder


def _run(capsys: pytest.CaptureFixture[str], store: Path, *args: str) -> str:
    code = main(["--store", str(store), *args])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "\x1b" not in out.out and "\x1b" not in out.err, args
    assert "\x07" not in out.out, args
    for raw in ("\u061c", "\u200b", "\u2028", *INVISIBLE):
        assert raw not in out.out, (args, raw)
    return out.out


def test_cli_text_output_is_inert(hostile: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "s.db"
    shown = _run(capsys, store, "ingest", str(hostile))
    # the problem table (its reason column wraps when the file's path is long: the test's
    # temporary folder grows a digit as pytest's run counter does)
    assert "('[/]'), not an object" in " ".join(shown.split())
    assert "of a type not known here ([/])" in shown
    assert "[b]x[i]" in shown and "\\x1b]0;pwned\\x07" in shown  # the file name, inert
    shown = _run(capsys, store, "sessions")
    assert "[b]S[/b]" in shown  # markup shown as text, not rendered bold
    shown = _run(capsys, store, "entries", SID)
    assert "[red]Bash[/red]" in shown and "\\x1b]52;c;" in shown
    assert "\\u061c" in shown and "\\u200b" in shown and "\\u2028" in shown
    assert "[bold]loud[/bold]" in shown
    shown = _run(capsys, store, "search", "hit text", "--mode", "fts")
    assert "[/]" in shown
    assert main(["--store", str(store), "recall", "[/]"]) == 0
    capsys.readouterr()
    shown = _run(capsys, store, "traces")
    assert "[/]" in shown
    _run(capsys, store, "context")
    shown = _run(capsys, store, "context", "--session", SID, "--agent", AGENT)
    assert "[/]" in shown
    shown = _run(capsys, store, "imports")
    shown = _run(capsys, store, "ingest", "--problems")
    assert "[/]" in shown


def test_markup_in_a_value_is_never_rendered(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Rich markup would be rendered as ANSI styles on a terminal: force one, and check that
    no style appears for the data while the tables themselves still render."""
    from rich.console import Console

    import lca_tui.output as output

    real = output.console

    def terminal() -> Console:
        c = real()
        c._force_terminal = True  # noqa: SLF001 - a colour terminal, as a user has
        return c

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.jsonl").write_text(json.dumps(dict(_lines()[0], sessionId="[b]S[/b]")) + "\n")
    assert main(["--store", str(tmp_path / "s.db"), "ingest", str(folder)]) == 0
    capsys.readouterr()
    output.console = terminal  # type: ignore[assignment]
    try:
        assert main(["--store", str(tmp_path / "s.db"), "sessions"]) == 0
    finally:
        output.console = real  # type: ignore[assignment]
    out = capsys.readouterr().out
    assert "[b]S[/b]" in out  # as text; bold would have eaten the tags


def test_one_escaping_function_for_app_and_cli() -> None:
    from lca_tui.output import inert
    from widgets.safe import safe_text

    for raw in (OSC_TITLE, "\u061c", "\u200b\u200c\u200d\u2060\ufeff", "\u2028\u2029", TEXT):
        assert safe_text(raw).plain == visible(raw)
        assert "\x1b" not in inert(raw).plain and inert(raw).plain == visible(raw).replace(
            "\n", " ⏎ ")
