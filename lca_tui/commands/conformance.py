"""``lca-tui conformance``: the Anamnesis conformance suite, run on scratch stores.

Each case of the bundle shipped in ``assets/conformance/`` runs on its own scratch store in a
temporary directory (never the user's store, whatever ``--store`` says), with the
deterministic fallback embedder. A table per family: pass / fail / not applicable with the
reason; the bundle's version and its manifest's sha256; exit 1 on any failure. ``--mutants``
also runs each named seeded defect and shows which cases catch it (exit 1 if one is missed).
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from lca_tui.output import Listing, add_json_flag, col, console, print_json
from store import one_line


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("conformance", parents=parents,
                       help="run the Anamnesis conformance suite on scratch stores",
                       description="Run the versioned bundle of conformance cases (Anamnesis "
                       "§10.1, eight families) on scratch stores, never your store: pass / "
                       "fail / not applicable per case and invariant; exit 1 on any "
                       "failure.")
    p.add_argument("--family", metavar="F", help="only this family (e.g. scope_isolation)")
    p.add_argument("--case", metavar="ID", help="only this case")
    p.add_argument("--mutants", action="store_true",
                   help="also run each seeded defect and show the cases that catch it")
    add_json_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from store import load_bundle, run_bundle, run_mutants

    bundle = load_bundle()
    bundle.select(args.family, args.case)  # a bad --family / --case: one clear line, exit 2
    suite = run_bundle(bundle, args.family, args.case)
    mutants = None
    if args.mutants:
        base = {c.id: c.status for c in suite.cases}
        families = {c.family for c in suite.cases}
        names = None if args.family is None and args.case is None else \
            [m.name for m in _mutants() if m.family in families]
        mutants = run_mutants(bundle, names, baseline=base) if names != [] else []
    failed = bool(suite.failed) or bool(mutants and any(not m.caught for m in mutants))
    if args.json:
        doc = suite.to_json()
        doc["ran_at"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        if mutants is not None:
            doc["mutants"] = [m.to_json() for m in mutants]
        print_json(doc)
        return 1 if failed else 0
    out = console()
    out.print(f"{suite.contract} · bundle {suite.version} · manifest sha256 {suite.digest}",
              markup=False, soft_wrap=True, style="bold")
    for family, counts in suite.by_family().items():
        t = Listing(col("case", whole=True), col("result", whole=True),
                    col("why", min_width=30, drop=1),
                    title=f"{family}: {counts['pass']} pass, {counts['fail']} fail, "
                          f"{counts['not_applicable']} not applicable")
        for c in suite.cases:
            if c.family != family:
                continue
            label = {"pass": "pass", "fail": "FAIL", "not_applicable": "not applicable"}
            why = "; ".join(c.reasons) if c.reasons else one_line(c.title, 200)
            t.add_row(c.id, label[c.status], why)
        t.print(out)
    total = suite.to_json()
    out.print(f"{total['passed']} pass, {total['failed']} fail, {total['not_applicable']} not "
              f"applicable, of {len(suite.cases)} cases", markup=False,
              style="bold red" if suite.failed else "bold")
    if mutants is not None:
        t = Listing(col("mutant", whole=True), col("family", whole=True),
                    col("caught", whole=True), col("caught by", min_width=30),
                    col("defect", min_width=30, drop=1), title="seeded defects")
        for m in mutants:
            t.add_row(m.name, m.family, "yes" if m.caught else "NO",
                      ", ".join(m.caught_by) or f"none of {m.ran} cases", m.defect)
        t.print(out)
    return 1 if failed else 0


def _mutants():  # type: ignore[no-untyped-def]
    from store import MUTANTS

    return MUTANTS
