"""The documentation: a README a newcomer reads in minutes (at most 250 lines) that links every
page under ``docs/``, and no relative link in the README or the docs that leads nowhere."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_LINES = 250
# [text](target) outside code spans; images too
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text("utf-8"), flags=re.DOTALL)
    text = re.sub(r"`[^`\n]*`", "", text)
    return _LINK.findall(text)


def _relative(target: str) -> str | None:
    """The file part of a relative link, or None for a URL or an anchor in the same page."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
        return None
    return target.split("#", 1)[0]


def test_readme_is_short() -> None:
    lines = README.read_text("utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines (at most {README_MAX_LINES})"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    pages = sorted(p.relative_to(ROOT).as_posix() for p in DOCS.glob("*.md"))
    assert pages, "no docs/*.md pages"
    linked = {(README.parent / t).resolve().relative_to(ROOT).as_posix()
              for t in filter(None, map(_relative, _links(README)))}
    assert [p for p in pages if p not in linked] == []


def test_every_relative_link_resolves() -> None:
    broken = []
    for page in [README, *sorted(DOCS.glob("*.md"))]:
        for target in _links(page):
            rel = _relative(target)
            if rel and not (page.parent / rel).exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert broken == []


def test_the_link_checks_can_fail(tmp_path: Path) -> None:
    """The checks above see a link that leads nowhere and one inside code is not a link."""
    page = tmp_path / "p.md"
    page.write_text("[a](missing.md) `[b](code.md)` [c](https://x.org) [d](#here)\n"
                    "```\n[e](block.md)\n```\n", encoding="utf-8")
    assert _links(page) == ["missing.md", "https://x.org", "#here"]
    assert [r for r in map(_relative, _links(page)) if r] == ["missing.md"]


_TEST_PATH = re.compile(r"(?<![\w/.])tests/[\w/]+\.py\b")
_NAMED_IN = ("README.md", "docs", "store", "lca_tui", "screens", "widgets")


def _named_test_paths(text: str) -> list[str]:
    """Every ``tests/….py`` path written in ``text`` (a test file a page or a docstring names)."""
    return _TEST_PATH.findall(text)


def test_every_test_file_a_page_or_docstring_names_exists() -> None:
    """A test file moved or renamed leaves no page or docstring pointing at its old path."""
    missing = []
    for where in _NAMED_IN:
        base = ROOT / where
        files = [base] if base.is_file() else sorted(
            p for p in base.rglob("*") if p.suffix in (".md", ".py"))
        for f in files:
            for path in _named_test_paths(f.read_text("utf-8")):
                if not (ROOT / path).exists():
                    missing.append(f"{f.relative_to(ROOT)}: {path}")
    assert missing == []


def test_the_test_path_check_can_fail() -> None:
    assert _named_test_paths("see `tests/test_gone.py` and tests/store/test_x.py, "
                             "not lca_tui/tests/a.py") == ["tests/test_gone.py",
                                                          "tests/store/test_x.py"]
    assert not (ROOT / "tests/test_gone.py").exists()
