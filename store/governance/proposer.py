"""The optional external proposer command (``governance.proposer_command``): it receives the
sessions' new entries as JSON on stdin and prints proposals in the ``propose`` format — a
JSON list, or ``{"proposals": [...]}``. One that fails, hangs past
``governance.proposer_timeout_s`` or prints garbage is reported; the pass's other results
stand."""

from __future__ import annotations

import json
import shlex
import subprocess
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store


@dataclass
class ProposerOutcome:
    documents: list[Any] = field(default_factory=list)
    error: str | None = None


def run_proposer(store: Store, sessions: list[dict[str, Any]]) -> ProposerOutcome:
    command = str(store.settings["governance.proposer_command"] or "").strip()
    timeout = float(store.settings["governance.proposer_timeout_s"])
    if not command:
        return ProposerOutcome()
    payload = json.dumps({"sessions": sessions}, ensure_ascii=False)
    try:
        done = subprocess.run(shlex.split(command), input=payload, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return ProposerOutcome(error=f"the proposer command ran past {timeout:g} s and was "
                                     "stopped")
    except OSError as exc:
        return ProposerOutcome(error=f"the proposer command could not run: {exc}")
    if done.returncode != 0:
        tail = (done.stderr or "").strip().splitlines()[-1:] or [""]
        return ProposerOutcome(error=f"the proposer command exited {done.returncode}"
                                     f"{': ' + tail[0][:200] if tail[0] else ''}")
    try:
        data = json.loads(done.stdout)
    except ValueError as exc:
        return ProposerOutcome(error=f"the proposer command printed no JSON ({exc})")
    docs = data.get("proposals") if isinstance(data, dict) else data
    if not isinstance(docs, list):
        return ProposerOutcome(error="the proposer command's JSON is neither a list of "
                                     "proposals nor {\"proposals\": [...]}")
    return ProposerOutcome(documents=docs)
