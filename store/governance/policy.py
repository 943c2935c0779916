"""What the checks allow: the approval choices of a proposal and the automatic-apply policy
(``governance.auto_apply``: by default ``reinforce`` and ``noop`` with no failed check, never a
``procedure`` or ``identity`` write)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from store.governance.records import (
    PERSON_ONLY_TYPES,
    ApprovalOption,
    ProposalInfo,
    ProposalSummary,
)

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

DECIDABLE = ("pending", "failed")


def approval_options(summary: ProposalSummary) -> list[ApprovalOption]:
    """How ``summary`` may be approved now: as proposed, ``reinforce`` (a duplicate),
    ``supersede`` / ``keep-both`` (a contradiction), each allowed or not, and why."""
    if summary.op is None:
        return [ApprovalOption(None, False, False, "history from a harness event: it has no "
                               "content to apply; it is decided in the harness")]
    if summary.status not in DECIDABLE:
        return [ApprovalOption(None, False, False, f"already {summary.status}")]
    checks = {c.kind: c for c in summary.checks}
    contra = checks.get("contradiction")
    dup = checks.get("duplicate")
    failed = [c.kind for c in summary.checks if c.result == "fail"]
    out: list[ApprovalOption] = []
    conflict = contra is not None and contra.result == "fail"
    other_fails = [k for k in failed if k != "contradiction"]
    if conflict:
        out.append(ApprovalOption(None, False, True, "the contradiction check failed: approve "
                                  "as supersede or keep-both, with a reason"))
    else:
        out.append(ApprovalOption(None, True, bool(other_fails),
                                  f"{', '.join(other_fails)} failed: say why you approve"
                                  if other_fails else f"apply the {summary.op} as proposed"))
    conflicting = {int(c.get("memory_id")) for c in (contra.evidence.get("conflicts") or [])
                   if c.get("memory_id") is not None} if conflict and contra else set()
    if dup is not None and dup.suggestion in ("reinforce", "noop") and summary.op == "add":
        mid = dup.evidence.get("memory_id")
        if mid is not None and int(mid) in conflicting:
            out.append(ApprovalOption("reinforce", False, False,
                                      f"not reinforce of memory {mid}: the contradiction check "
                                      "failed against it", mid))
        else:
            out.append(ApprovalOption("reinforce", True, False,
                                      f"reinforce memory {mid} instead of adding a near-copy",
                                      mid))
    if conflict and contra is not None:
        mid = contra.evidence.get("memory_id")
        if summary.op == "add":
            out.append(ApprovalOption("supersede", True, True,
                                      f"the new memory replaces memory {mid}", mid))
        out.append(ApprovalOption("keep-both", True, True,
                                  f"keep both, flagged as contradicting memory {mid} (recall "
                                  "penalises both)", mid))
    return out


def auto_apply_allowed(store: Store, info: ProposalInfo) -> tuple[bool, str]:
    """Whether ``governance.auto_apply`` applies ``info`` without a person, and why not."""
    ops = {o.strip() for o in str(store.settings["governance.auto_apply"]).split(",")
           if o.strip()}
    s = info.summary
    if s.op is None or s.op not in ops:
        return False, f"{s.op} is not in governance.auto_apply ({', '.join(sorted(ops))})"
    if (s.type or "").lower() in PERSON_ONLY_TYPES:
        return False, f"a {s.type} write: a person decides"
    risk = next((c for c in s.checks if c.kind == "procedure_risk"), None)
    if risk is None or risk.result != "pass":
        # the check also reads the targets' own types (a declared type cannot dodge it) and
        # a type change; without the check, a person decides
        return False, (risk.detail if risk is not None else "no procedure_risk check")
    if s.status != "pending":
        return False, f"it is {s.status}"
    failed = [c.kind for c in s.checks if c.result == "fail"]
    if failed:
        return False, f"{', '.join(failed)} failed"
    return True, "allowed by governance.auto_apply"
