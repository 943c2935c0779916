"""The case bundle: ``assets/conformance/manifest.json`` (contract version, bundle version,
each case file with its sha256) and one JSON file per case under ``cases/``.

The manifest digest is the sha256 of the manifest file's bytes: a result names it, so a
result can be tied to the exact bundle it ran. A case file whose sha256 differs from the
manifest's, a file the manifest does not list, or a malformed case is a ``BundleError``
naming the file and why.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from store.core.assets import asset_path

FAMILIES = ("scope_isolation", "provenance_preservation", "authority_non_amplification",
            "temporal_revision", "procedure_inertness", "poisoning_resistance",
            "deletion_closure", "termination_and_audit")
CASE_KEYS = {"id", "family", "invariant", "title", "principal", "channel", "settings", "state",
             "ops", "expect", "final", "not_applicable", "paper"}


class BundleError(ValueError):
    """The bundle cannot be trusted or read; the message names the file."""


@dataclass
class Bundle:
    root: Path
    contract: str
    version: str
    digest: str
    cases: list[dict[str, Any]] = field(default_factory=list)

    def select(self, family: str | None = None, case: str | None = None
               ) -> list[dict[str, Any]]:
        if family is not None and family not in FAMILIES:
            raise BundleError(f"--family must be one of {', '.join(FAMILIES)}, got {family!r}")
        out = [c for c in self.cases if (family is None or c["family"] == family)
               and (case is None or c["id"] == case)]
        if case is not None and not out:
            raise BundleError(f"no case {case!r} in bundle {self.version}"
                              + (f" family {family}" if family else ""))
        return out


def canonical(value: Any) -> bytes:
    """The bytes a digest is taken of: sorted keys, no spaces, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def default_root() -> Path:
    return asset_path("conformance")


def load_bundle(root: Path | None = None) -> Bundle:
    root = root or default_root()
    mpath = root / "manifest.json"
    try:
        raw = mpath.read_bytes()
        manifest = json.loads(raw)
    except (OSError, ValueError) as exc:
        raise BundleError(f"{mpath}: cannot read the manifest: {exc}") from None
    if not isinstance(manifest, dict):
        raise BundleError(f"{mpath}: the manifest is not a JSON object")
    for key in ("contract", "version", "files"):
        if key not in manifest:
            raise BundleError(f"{mpath}: the manifest has no {key!r}")
    if not isinstance(manifest["files"], list):
        raise BundleError(f"{mpath}: 'files' must be a list")
    listed: dict[str, str] = {}
    for i, f in enumerate(manifest["files"]):
        if not isinstance(f, dict) or not isinstance(f.get("path"), str) \
                or not isinstance(f.get("sha256"), str):
            raise BundleError(f"{mpath}: files[{i}] needs a 'path' and a 'sha256' (strings)")
        rel = f["path"]
        # only a case file of this bundle: cases/<name>.json, no other directory, no '..'
        parts = rel.split("/")
        if len(parts) != 2 or parts[0] != "cases" or not parts[1].endswith(".json") \
                or parts[1] in (".json", "..json") or parts[1].startswith(".") or "\\" in rel:
            raise BundleError(f"{mpath}: files[{i}]: {rel!r} is not a path cases/<name>.json")
        if rel in listed:
            raise BundleError(f"{mpath}: files[{i}]: {rel!r} listed twice")
        listed[rel] = f["sha256"]
    on_disk = {str(p.relative_to(root)) for p in (root / "cases").glob("*.json")}
    extra = sorted(on_disk - set(listed))
    if extra:
        raise BundleError(f"{root / extra[0]}: a case file the manifest does not list")
    bundle = Bundle(root, str(manifest["contract"]), str(manifest["version"]), sha256(raw))
    seen: set[str] = set()
    for rel, digest in listed.items():
        path = root / rel
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise BundleError(f"{path}: listed in the manifest but unreadable: {exc}") from None
        if sha256(data) != digest:
            raise BundleError(f"{path}: sha256 {sha256(data)[:12]}… differs from the "
                              f"manifest's {digest[:12]}… (the case changed; rebuild the "
                              "manifest)")
        try:
            case = json.loads(data)
        except ValueError as exc:
            raise BundleError(f"{path}: not JSON: {exc}") from None
        problem = _check_case(case)
        if problem:
            raise BundleError(f"{path}: {problem}")
        if case["id"] in seen:
            raise BundleError(f"{path}: case id {case['id']!r} used twice")
        seen.add(case["id"])
        case["_file"] = rel
        bundle.cases.append(case)
    bundle.cases.sort(key=lambda c: (FAMILIES.index(c["family"]), c["id"]))
    return bundle


def _check_case(case: Any) -> str | None:
    if not isinstance(case, dict):
        return "a case is a JSON object"
    unknown = sorted(set(case) - CASE_KEYS)
    if unknown:
        return f"unknown key {unknown[0]!r}"
    for key in ("id", "family", "invariant", "title"):
        if not isinstance(case.get(key), str) or not case[key].strip():
            return f"{key!r} must be a non-empty string"
    if case["family"] not in FAMILIES:
        return f"family {case['family']!r} is not one of {', '.join(FAMILIES)}"
    if "not_applicable" in case:
        return None
    if not isinstance(case.get("ops"), list) or not isinstance(case.get("expect"), list) \
            or not case["expect"]:
        return "a case needs 'ops' and a non-empty 'expect' list"
    final = case.get("final")
    if final is not None:
        if not isinstance(final, dict) or {"projection", "expected", "sha256"} - set(final):
            return "'final' needs projection, expected and sha256"
        if sha256(canonical(final["expected"])) != final["sha256"]:
            return "'final.sha256' is not the digest of 'final.expected'"
    return None


def write_manifest(root: Path, contract: str, version: str) -> Path:
    """Rewrite the manifest from the case files on disk (filling each ``final.sha256``)."""
    files = []
    for path in sorted((root / "cases").glob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        final = case.get("final")
        if isinstance(final, dict) and "expected" in final:
            want = sha256(canonical(final["expected"]))
            if final.get("sha256") != want:
                final["sha256"] = want
                path.write_text(json.dumps(case, indent=1, ensure_ascii=False) + "\n",
                                encoding="utf-8")
        files.append({"path": str(path.relative_to(root)),
                      "sha256": sha256(path.read_bytes())})
    out = root / "manifest.json"
    out.write_text(json.dumps({"contract": contract, "version": version, "files": files},
                              indent=1) + "\n", encoding="utf-8")
    return out
