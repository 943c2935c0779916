"""The external verifier (LCA §4.6.1: a reviewer with no shared context).

``governance.verifier_command`` names a command (split like a shell would, never run through
one). It reads one JSON document on stdin::

    {"candidate": {"op", "type", "name", "content", "metadata", "rationale", "targets"},
     "memories": [{"id", "name", "type", "cos", "body"}],   # the memories it touches
     "sources": [{"entry_id", "span", "file", "text"}]}       # its evidence spans

and prints a verdict ``{"result": "pass" | "warn" | "fail", "detail": "..."}`` (``verdict``
and ``reason`` are accepted too). Its answer is its own check. A command that cannot start,
exits non-zero, runs past ``governance.verifier_timeout_s`` or prints anything but such a
verdict gives a ``warn`` check saying so — never an exception. Secret text is withheld from
it like from every other output.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from typing import TYPE_CHECKING, Any

from store.governance.records import MASK, RESULTS, CheckInfo

if TYPE_CHECKING:
    from store.governance.checks import Candidate

_OUTPUT_CHARS = 2000


def _payload(cand: Candidate, memories: list[dict[str, Any]]) -> dict[str, Any]:
    secret = cand.sensitivity == "secret"
    return {
        "candidate": {"op": cand.op, "type": cand.type, "name": cand.name,
                      "content": MASK if secret else cand.content,
                      "metadata": cand.metadata, "rationale": cand.rationale,
                      "targets": [{"id": t["id"], "name": t.get("name"),
                                   "body": None if t.get("sensitivity") == "secret"
                                   else t.get("body")} for t in cand.targets]},
        "memories": memories,
        "sources": [{"entry_id": e.get("entry_id"), "span": e.get("span"),
                     "file": e.get("file"), "text": e.get("text")} for e in cand.evidence],
    }


def verify_with_command(command: str, timeout: float, cand: Candidate,
                        memories: list[dict[str, Any]]) -> CheckInfo:
    """Run the verifier on ``cand``; its verdict, or a ``warn`` that says what went wrong."""
    evidence: dict[str, Any] = {"command": command, "timeout_s": timeout}

    def warn(why: str, **more: Any) -> CheckInfo:
        return CheckInfo("verifier", "warn", f"verifier {why}: not a verdict, a person "
                         "decides", {**evidence, "error": why, **more})

    try:
        argv = shlex.split(command)
    except ValueError as exc:
        return warn(f"command cannot be parsed ({exc})")
    if not argv:
        return warn("command is empty")
    try:
        done = subprocess.run(argv, input=json.dumps(_payload(cand, memories)),
                              capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        partial = exc.stdout if isinstance(exc.stdout, str) else (exc.stdout or b"").decode(
            "utf-8", "replace")
        return warn(f"timed out after {timeout:g} s", stdout=partial[:_OUTPUT_CHARS])
    except OSError as exc:
        return warn(f"could not start ({exc.strerror or exc})")
    out = (done.stdout or "").strip()
    evidence["stdout"] = out[:_OUTPUT_CHARS]
    if done.returncode != 0:
        err = (done.stderr or "").strip().splitlines()
        return warn(f"exited with status {done.returncode}"
                    + (f" ({err[-1][:200]})" if err else ""))
    try:
        verdict = json.loads(out)
    except ValueError:
        return warn(f"printed no JSON verdict ({out[:80]!r})" if out else "printed nothing")
    if not isinstance(verdict, dict):
        return warn("printed JSON that is not an object")
    result = str(verdict.get("result") or verdict.get("verdict") or "").strip().lower()
    if result not in RESULTS:
        return warn(f"gave no result of pass, warn or fail ({result[:40]!r})")
    detail = str(verdict.get("detail") or verdict.get("reason") or "").strip()
    evidence["verdict"] = verdict
    return CheckInfo("verifier", result,
                     f"verifier says {result}" + (f": {detail[:300]}" if detail else ""),
                     evidence)
