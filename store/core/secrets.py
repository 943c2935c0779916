"""Secrets and personal data caught at capture: the detector every entry and memory goes
through as it is written, and the ``<private>…</private>`` spans stored already redacted.

The detection is Yelp's ``detect-secrets`` (1.5): its provider plugins (AWS, GitHub, GitLab,
Slack, Stripe, OpenAI, PyPI, npm, SendGrid, Twilio, Mailchimp, Discord, Telegram, Azure
storage, Square, Artifactory), private key headers, JWTs (decoded and checked), passwords in
URLs (``BasicAuthDetector``) and ``KEY=value`` / ``key: "value"`` assignments of secret-named
keys (``KeywordDetector`` in its config-file mode), run line by line through each plugin's
``analyze_string``, then detect-secrets' own false-positive heuristics (templated values,
``$VAR`` references, sequential strings, UUIDs, ``id``-named values, non-alphanumeric values).
Its entropy plugins (``Base64HighEntropyString``, ``HexHighEntropyString``) and the public-IP
plugin are not run: on transcripts they flag every commit hash, digest and base64 blob. Its
whole-file scan and global settings (``scan_line`` clears a cache per call) are not used.

E-mail addresses and phone numbers are opt-in (``privacy.detect_email``,
``privacy.detect_phone``): an e-mail address by a pattern, a phone number by Google's
``phonenumbers`` matcher (valid numbers only; international format unless
``privacy.phone_region`` names the region of national ones).

A finding carries its kind and where it is in the text — never the value. ``mask`` puts
``[secret: <kind>]`` in place of each value: what the FTS index, the vectors, a chunk's text
and a recall trace's query hold. No textual, no rich here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

PRIVATE_OPEN = "<private>"
PRIVATE_CLOSE = "</private>"
PRIVATE_MASK = "[private]"
_PRIVATE = re.compile(r"<private>.*?(?:</private>|\Z)", re.DOTALL | re.IGNORECASE)

# detect-secrets plugin class → the kind a finding records (short, stable, no value in it).
_PLUGINS: dict[str, str] = {
    "AWSKeyDetector": "aws-key",
    "GitHubTokenDetector": "github-token",
    "GitLabTokenDetector": "gitlab-token",
    "SlackDetector": "slack-token",
    "StripeDetector": "stripe-key",
    "OpenAIDetector": "openai-key",
    "PypiTokenDetector": "pypi-token",
    "NpmDetector": "npm-token",
    "SendGridDetector": "sendgrid-key",
    "TwilioKeyDetector": "twilio-key",
    "MailchimpDetector": "mailchimp-key",
    "DiscordBotTokenDetector": "discord-token",
    "TelegramBotTokenDetector": "telegram-token",
    "AzureStorageKeyDetector": "azure-storage-key",
    "SquareOAuthDetector": "square-oauth",
    "ArtifactoryDetector": "artifactory-token",
    "PrivateKeyDetector": "private-key",
    "JwtTokenDetector": "jwt",
    "BasicAuthDetector": "password-url",
    "KeywordDetector": "keyword-value",
}
KINDS: tuple[str, ...] = (*_PLUGINS.values(), "email", "phone")
"""Every kind a finding may record (``private-span`` is recorded for redacted spans)."""
PRIVATE_SPAN = "private-span"

_PLACEHOLDER = re.compile(r"\[secret: [a-z-]+\]")
# A private key block: from its header to its footer (or the end of the text when cut off).
_KEY_BLOCK = re.compile(
    r"(?:-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d)"
    r".*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|Private-MAC: *[0-9a-fA-F]+|\Z)",
    re.DOTALL)
_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@"
                    r"(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,24}(?![\w-])")
# Lines longer than this are scanned in pieces of this size (with an overlap): a 2 MB
# minified line must not stall the keyword regexes.
_PIECE = 4000
_OVERLAP = 200
_WINDOW = 120  # characters either side of a secret-sounding name the keyword rules read
# Texts up to this long keep their findings in a cache (8,192 texts), so the write path, the
# indexer's masking and ``embed_new`` detect an entry once; a longer one is detected again.
_CACHE_CHARS = 20_000
# Every name of detect-secrets' keyword deny list holds one of these.
_KEYWORD_HINTS = ("key", "pass", "pwd", "secret", "contrase")


@dataclass(frozen=True)
class Finding:
    """One detected value: its kind and its span in the text (the value is never kept)."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class Detector:
    """What is detected: the secrets always; e-mail addresses and phone numbers when asked."""

    email: bool = False
    phone: bool = False
    phone_region: str | None = None
    secrets: bool = True  # off only where a setting says so (the demo's fixed story)

    @classmethod
    def from_settings(cls, settings: Any) -> Detector:
        region = str(settings["privacy.phone_region"] or "").strip().upper() or None
        return cls(bool(settings["privacy.detect_email"]),
                   bool(settings["privacy.detect_phone"]), region,
                   bool(settings["privacy.detect_secrets"]))

    def detect(self, text: str) -> tuple[Finding, ...]:
        """Every finding in ``text``, in order, spans not overlapping."""
        if not text:
            return ()
        if len(text) <= _CACHE_CHARS:
            return _detect_cached(self, text)
        return _detect(self, text)

    def mask(self, text: str) -> str:
        """``text`` with every detected value replaced by ``[secret: <kind>]``."""
        return mask(text, self.detect(text))


DEFAULT = Detector()


def mask(text: str, findings: tuple[Finding, ...] | list[Finding]) -> str:
    if not findings:
        return text
    out, at = [], 0
    for f in findings:
        out.append(text[at:f.start])
        out.append(f"[secret: {f.kind}]")
        at = f.end
    out.append(text[at:])
    return "".join(out)


def kinds(findings: tuple[Finding, ...] | list[Finding]) -> dict[str, int]:
    """kind → how many values of it (what is recorded: never the values)."""
    out: dict[str, int] = {}
    for f in findings:
        out[f.kind] = out.get(f.kind, 0) + 1
    return dict(sorted(out.items()))


def redact_private(text: str) -> tuple[str, int]:
    """``text`` with each ``<private>…</private>`` span (an unclosed one runs to the end)
    replaced by ``[private]``, and how many spans there were."""
    if "<private" not in text and "<PRIVATE" not in text.upper():
        return text, 0
    out, n = _PRIVATE.subn(PRIVATE_MASK, text)
    return out, n


@lru_cache(maxsize=1)
def _plugins() -> tuple[tuple[str, Any], ...]:
    from detect_secrets.plugins import (
        artifactory,
        aws,
        azure_storage_key,
        basic_auth,
        discord,
        github_token,
        gitlab_token,
        jwt,
        keyword,
        mailchimp,
        npm,
        openai,
        private_key,
        pypi_token,
        sendgrid,
        slack,
        square_oauth,
        stripe,
        telegram_token,
        twilio,
    )

    classes = [aws.AWSKeyDetector, github_token.GitHubTokenDetector,
               gitlab_token.GitLabTokenDetector, slack.SlackDetector, stripe.StripeDetector,
               openai.OpenAIDetector, pypi_token.PypiTokenDetector, npm.NpmDetector,
               sendgrid.SendGridDetector, twilio.TwilioKeyDetector,
               mailchimp.MailchimpDetector, discord.DiscordBotTokenDetector,
               telegram_token.TelegramBotTokenDetector,
               azure_storage_key.AzureStorageKeyDetector, square_oauth.SquareOAuthDetector,
               artifactory.ArtifactoryDetector, private_key.PrivateKeyDetector,
               jwt.JwtTokenDetector, basic_auth.BasicAuthDetector, keyword.KeywordDetector]
    return tuple((_PLUGINS[c.__name__], c()) for c in classes)


@lru_cache(maxsize=1)
def _keyword_groups() -> Any:
    from detect_secrets.plugins import keyword

    # KEY=value lines and ``key: "value"``: the plugin's config-file rules, plus its
    # quoted-assignment rules for code (``password = "..."``).
    return {**keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
            **keyword.CONFIG_DENYLIST_REGEX_TO_GROUP}


def _false_positive(value: str, line: str) -> bool:
    """detect-secrets' heuristic filters (its defaults for an ad-hoc scan)."""
    from detect_secrets.filters import heuristic as h

    return (h.is_templated_secret(value) or h.is_prefixed_with_dollar_sign(value)
            or h.is_sequential_string(value) or h.is_potential_uuid(value)
            or h.is_likely_id_string(value, line) or h.is_not_alphanumeric_string(value)
            or h.is_indirect_reference(line))


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(offset, piece) of every line of ``text``; a long line in overlapping pieces."""
    at = 0
    for line in text.splitlines(keepends=True):
        if len(line) <= _PIECE:
            yield at, line
        else:
            for i in range(0, len(line), _PIECE - _OVERLAP):
                yield at + i, line[i:i + _PIECE]
        at += len(line)


@lru_cache(maxsize=1)
def _keyword_names() -> re.Pattern[str]:
    from detect_secrets.plugins import keyword

    return re.compile(keyword.DENYLIST_REGEX, re.IGNORECASE)


def _keyword_windows(line: str) -> Iterator[tuple[int, str]]:
    """(offset, text) of the parts of ``line`` around a secret-sounding name: the keyword
    plugin's dozen patterns are run there only (on every whole line they took 4.0 s of the
    4.4 s the detector spent on the 2.8 MB of the real Claude Code sessions)."""
    low = line.lower()
    if not any(w in low for w in _KEYWORD_HINTS):  # a substring test is 50x cheaper
        return
    spans: list[list[int]] = []
    for m in _keyword_names().finditer(line):
        a, b = max(0, m.start() - _WINDOW), min(len(line), m.end() + _WINDOW)
        if spans and a <= spans[-1][1]:
            spans[-1][1] = b
        else:
            spans.append([a, b])
    for a, b in spans:
        yield a, line[a:b]


def _spans_of(value: str, line: str, offset: int) -> Iterator[tuple[int, int]]:
    i = line.find(value)
    while i >= 0 and value:
        yield offset + i, offset + i + len(value)
        i = line.find(value, i + len(value))


def _regex_spans(kind: str, plugin: Any, line: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, value) of each match of a provider plugin's own patterns: the span of
    the value group when the pattern has one of 8 or more characters, else of the whole
    match (GitHub's pattern captures only its ``ghp`` prefix); the value is the group's. A
    JWT runs on over its signature, which the plugin's lazy pattern leaves out, and must
    decode (the plugin's own check)."""
    for regex in plugin.denylist:
        for m in regex.finditer(line):
            g = m.lastindex
            a, b = m.span(g) if g and len(m.group(g) or "") >= 8 else m.span(0)
            if kind == "jwt":
                while b < len(line) and (line[b].isalnum() or line[b] in "-_.+/="):
                    b += 1
                if not plugin.is_formally_valid(line[a:m.end(0)]):
                    continue
            yield a, b, (m.group(g) if g else m.group(0)) or ""


def _detect(detector: Detector, text: str) -> tuple[Finding, ...]:
    found: list[Finding] = []
    key_blocks = False
    groups = _keyword_groups()
    for offset, line in _lines(text) if detector.secrets else ():
        for kind, plugin in _plugins():
            if kind == "private-key":
                if any(r.search(line) for r in plugin.denylist):
                    key_blocks = True
            elif kind == "keyword-value":
                for w_at, window in _keyword_windows(line):
                    for value in plugin.analyze_string(window, denylist_regex_to_group=groups):
                        value = value.strip()
                        if not _false_positive(value, window):
                            found.extend(Finding(kind, a, b) for a, b in
                                         _spans_of(value, window, offset + w_at))
            else:
                for a, b, value in _regex_spans(kind, plugin, line):
                    if kind == "password-url" and _false_positive(value, line):
                        continue
                    found.append(Finding(kind, offset + a, offset + b))
    if key_blocks:
        found.extend(Finding("private-key", m.start(), m.end())
                     for m in _KEY_BLOCK.finditer(text))
    personal: list[Finding] = []
    if detector.email and "@" in text:
        personal.extend(Finding("email", m.start(), m.end()) for m in _EMAIL.finditer(text))
    if detector.phone:
        import phonenumbers

        for m in phonenumbers.PhoneNumberMatcher(text, detector.phone_region,
                                                 leniency=phonenumbers.Leniency.VALID):
            personal.append(Finding("phone", m.start, m.end))
    if "[secret: " in text:  # masking is idempotent: a placeholder is never a value
        marks = [(m.start(), m.end()) for m in _PLACEHOLDER.finditer(text)]
        found = [f for f in found if not any(f.start < b and a < f.end for a, b in marks)]
    secret = _merged(found)
    # a secret's span wins over an e-mail or phone pattern overlapping it (a password URL's
    # ``pass@host`` is not an address)
    personal = [p for p in personal if not any(p.start < s.end and s.start < p.end
                                              for s in secret)]
    return _merged([*secret, *personal])


def _merged(found: list[Finding]) -> tuple[Finding, ...]:
    """Sorted, overlapping spans merged (the longer span's kind wins)."""
    out: list[Finding] = []
    for f in sorted(set(found), key=lambda f: (f.start, -(f.end - f.start))):
        if out and f.start < out[-1].end:
            last = out[-1]
            if f.end > last.end:
                out[-1] = Finding(last.kind, last.start, f.end)
            continue
        out.append(f)
    return tuple(out)


@lru_cache(maxsize=8192)
def _detect_cached(detector: Detector, text: str) -> tuple[Finding, ...]:
    return _detect(detector, text)
