"""The Anamnesis conformance suite (Anamnesis §6.6, §10): a versioned bundle of cases as data
(``assets/conformance/``), a runner that plays each case on a scratch store through the public
``Store`` API and checks its expected outcome per invariant, and named seeded defects
("mutants") that the suite must catch.

``run_bundle(family=, case=)`` → ``SuiteResult``; ``run_mutants()`` → ``MutantResult`` rows;
``load_bundle()`` reads and checks the manifest (each file's sha256, the contract version).
"""

from store.conformance.bundle import Bundle, BundleError, load_bundle
from store.conformance.mutants import MUTANTS, MutantResult, run_mutants
from store.conformance.runner import CaseResult, SuiteResult, run_bundle, run_case

__all__ = ["MUTANTS", "Bundle", "BundleError", "CaseResult", "MutantResult", "SuiteResult",
           "load_bundle", "run_bundle", "run_case", "run_mutants"]
