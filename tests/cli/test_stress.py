"""``lca-tui stress`` exits non-zero when it surfaced errors."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("as_json", [True, False])
def test_stress_exits_non_zero_when_it_surfaced_errors(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str],
                                                       as_json: bool) -> None:
    import lca_tui.stress as stress
    from lca_tui.cli import main

    def result(errors: list[str]) -> stress.StressResult:
        return stress.StressResult(1.0, 10, 10.0, 1.0, 2.0, 5, 1, 1, None, errors=errors)

    flag = ["--json"] if as_json else []
    for errors, code in (([], 0), (["harness: StoreLocked: the store is busy [/]"], 1)):
        monkeypatch.setattr(stress, "run_stress", lambda *a, e=errors, **k: result(e))
        assert main(["stress", "--seconds", "1", *flag]) == code
        capsys.readouterr()
