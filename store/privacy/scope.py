"""What a user asks to erase or redact, and the matcher that finds it in any stored value.

A scope is a session, an entry, a set of entries (``entries``: ids joined by commas, what the
transcript retention erases in one erasure; not offered by ``erase``), a memory, a text
(``match``: a case-insensitive substring — not the FTS query builder, which ORs the words and
would match half the store) or a regular expression. The matcher looks in a stored value as
it is and, where the value is JSON with escapes (``\\u00e9``, ``\\"``), in the decoded
strings too, so that text stored inside JSON (an entry's ``meta``, a trace's settings) is found
whatever its escaping.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from store.core.vec import STOP_WORDS
from store.core.vocab import plural
from store.privacy.content import KNOWN_KEYS, META_KEYS, is_json_meta

SCOPE_KINDS = ("session", "entry", "entries", "memory", "match", "regex")
TEXT_KINDS = ("match", "regex")
MARK = "[REDACTED]"
_WORD = re.compile(r"\w+", re.UNICODE)
MIN_WORD = 3


class ScopeError(ValueError):
    """A scope that cannot be used as given (empty text, a bad regex, an unknown kind)."""


@dataclass(frozen=True)
class Scope:
    kind: str
    value: str

    def __post_init__(self) -> None:
        if self.kind not in SCOPE_KINDS:
            raise ScopeError(f"scope must be one of {', '.join(SCOPE_KINDS)}, got {self.kind!r}")
        if not str(self.value).strip():
            raise ScopeError(f"--{self.kind} needs a non-empty value")
        if self.kind == "regex":
            try:
                pattern = re.compile(self.value)
            except re.error as exc:
                raise ScopeError(f"--regex {self.value!r} is not a valid regular expression: "
                                 f"{exc}") from None
            if pattern.search(""):
                raise ScopeError(f"--regex {self.value!r} matches the empty string: it would "
                                 "match every record; make it more specific")
        if self.kind in ("entry", "memory") and not str(self.value).isdigit():
            raise ScopeError(f"--{self.kind} takes a numeric id, got {self.value!r}")
        if self.kind == "entries" and not all(p.isdigit() for p in str(self.value).split(",")):
            raise ScopeError(f"an entries scope takes entry ids joined by commas, got "
                             f"{self.value!r}")

    @classmethod
    def of_entries(cls, ids: list[int]) -> Scope:
        """The scope of a set of entries (ids, in order, each once)."""
        return cls("entries", ",".join(str(i) for i in sorted(set(ids))))

    @property
    def ids(self) -> list[int]:
        """The ids an ``entry``, ``entries`` or ``memory`` scope names."""
        if self.kind not in ("entry", "entries", "memory"):
            return []
        return [int(p) for p in str(self.value).split(",")]

    @property
    def record_kind(self) -> str:
        """The kind a tombstone keeps: a set of entries is entries (``entry``)."""
        return "entry" if self.kind == "entries" else self.kind

    @property
    def is_text(self) -> bool:
        return self.kind in TEXT_KINDS

    def label(self) -> str:
        """How the scope is named on screen and in the CLI (this shows the text: never
        store it — tombstones keep the kind only)."""
        if self.kind == "entries":
            n = len(self.ids)
            return plural(n, "entry", "entries")
        return f"{self.kind} {self.value!r}" if self.is_text else f"{self.kind} {self.value}"


def _escaped_forms(text: str) -> list[str]:
    """``text`` as it appears inside a JSON string, ASCII-escaped or not."""
    forms = [text]
    for ascii_only in (True, False):
        form = json.dumps(text, ensure_ascii=ascii_only)[1:-1]
        if form not in forms:
            forms.append(form)
    return forms


class Matcher:
    """Finds a text scope in stored values, and replaces what it finds with ``[REDACTED]``."""

    def __init__(self, scope: Scope) -> None:
        if not scope.is_text:
            raise ScopeError(f"a {scope.kind} scope has no text to match")
        self.scope = scope
        if scope.kind == "match":
            forms = _escaped_forms(scope.value)
            self.pattern = re.compile("|".join(re.escape(f) for f in
                                               sorted(forms, key=len, reverse=True)),
                                      re.IGNORECASE)
        else:
            self.pattern = re.compile(scope.value)
        self.found: dict[str, None] = {}  # distinct matched texts, in order (probes use them)

    def _note(self, match: re.Match[str]) -> None:
        if len(self.found) < 200:
            self.found.setdefault(match.group(0))

    def holds(self, value: Any) -> bool:
        """True when ``value`` (a stored column value) holds the scope's text."""
        if not isinstance(value, str) or not value:
            return False
        m = self.pattern.search(value)
        if m is not None:
            self._note(m)
            return True
        if "\\" in value and value[:1] in "{[\"":
            try:
                decoded = json.loads(value)
            except ValueError:
                return False
            return any(self.holds(s) for s in _strings(decoded))
        return False

    def holds_in(self, table: str, column: str, value: Any) -> bool:
        """True when ``table.column``'s ``value`` holds the scope's text where it is content
        (``store.privacy.content``: a meta-like JSON column by its content strings only)."""
        if not is_json_meta(table, column) or not isinstance(value, str):
            return self.holds(value)
        decoded = _json_container(value)
        if decoded is None:
            return self.holds(value)
        return any(self.holds(s) for s in _content_strings(decoded))

    def redact_in(self, table: str, column: str, value: str) -> tuple[str, int]:
        """``redact`` of ``table.column``: a meta-like JSON column has only its content
        strings rewritten (a model name or an id under a metadata key stays)."""
        decoded = _json_container(value) if is_json_meta(table, column) else None
        if decoded is None:
            return self.redact(value)
        count = [0]
        cleaned = _walk_content(decoded, lambda s: self._sub(s, count))
        out = json.dumps(cleaned, ensure_ascii=False)
        if any(self.holds(s) for s in _content_strings(cleaned)):
            return json.dumps({"redacted": True}), count[0] + 1
        return out, count[0]

    def redact(self, value: str) -> tuple[str, int]:
        """``value`` with every match replaced by ``[REDACTED]``; and how many were replaced.

        JSON values are rewritten string by string and stay valid JSON."""
        if value[:1] in "{[" :
            try:
                decoded = json.loads(value)
            except ValueError:
                decoded = None
            if isinstance(decoded, (dict, list)):
                count = [0]
                cleaned = _walk(decoded, lambda s: self._sub(s, count))
                out = json.dumps(cleaned, ensure_ascii=False)
                if self.pattern.search(out):  # a match across JSON structure: drop it all
                    return json.dumps({"redacted": True}), count[0] + 1
                return out, count[0]
        out, n = self.pattern.subn(MARK, value)
        return out, n

    def _sub(self, s: str, count: list[int]) -> str:
        out, n = self.pattern.subn(MARK, s)
        count[0] += n
        return out


def _strings(value: Any) -> list[str]:
    out: list[str] = []
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            out.append(str(k))
            out.extend(_strings(v))
    elif isinstance(value, list):
        for v in value:
            out.extend(_strings(v))
    return out


def _json_container(value: str) -> dict[str, Any] | list[Any] | None:
    if value[:1] not in "{[":
        return None
    try:
        decoded = json.loads(value)
    except ValueError:
        return None
    return decoded if isinstance(decoded, (dict, list)) else None


def _content_strings(value: Any) -> list[str]:
    """The strings of a meta-like JSON value that may be content: every string value but
    those under a metadata key, and every key the store did not name itself."""
    out: list[str] = []
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            if k in META_KEYS:
                continue
            if k not in KNOWN_KEYS:
                out.append(str(k))
            out.extend(_content_strings(v))
    elif isinstance(value, list):
        for v in value:
            out.extend(_content_strings(v))
    return out


def _walk_content(value: Any, fix: Any) -> Any:
    """``_walk`` over the content strings only (see ``_content_strings``)."""
    if isinstance(value, str):
        return fix(value)
    if isinstance(value, dict):
        return {(k if k in KNOWN_KEYS else fix(str(k))): (v if k in META_KEYS else
                                                           _walk_content(v, fix))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_walk_content(v, fix) for v in value]
    return value


def _walk(value: Any, fix: Any) -> Any:
    if isinstance(value, str):
        return fix(value)
    if isinstance(value, dict):
        return {fix(str(k)): _walk(v, fix) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, fix) for v in value]
    return value


def redact_all(value: str) -> str:
    """A whole value redacted (an entry or memory named by id): JSON keeps its shape, with
    every string replaced, numbers and flags kept (usage figures stay readable)."""
    if value[:1] in "{[":
        try:
            decoded = json.loads(value)
        except ValueError:
            decoded = None
        if isinstance(decoded, (dict, list)):
            return json.dumps(_walk_values(decoded), ensure_ascii=False)
    return MARK if value else value


def _walk_values(value: Any) -> Any:
    if isinstance(value, str):
        return MARK if value else value
    if isinstance(value, dict):
        return {k: _walk_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk_values(v) for v in value]
    return value


def words(texts: list[str]) -> list[str]:
    """The words of ``texts`` worth probing for on their own: lower-cased, at least
    ``MIN_WORD`` characters, not stop words, in first-seen order."""
    out: dict[str, None] = {}
    for t in texts:
        for w in _WORD.findall(t):
            lw = w.lower()
            if len(lw) >= MIN_WORD and lw not in STOP_WORDS and not lw.isdigit():
                out.setdefault(lw)
    return list(out)
