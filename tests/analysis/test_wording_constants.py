"""Words derived from the constants they state: a threshold changed in one place is worded
everywhere (the verdict rule, the noisy finding, the SLO)."""

from types import SimpleNamespace

import pytest

from stackbench.analysis import findings, gate, stats, verdicts, wording
from stackbench.config import noise
from stackbench.config.slo import latency_words, slo_words
from stackbench.config.suite import Slo


def test_the_verdict_rule_states_the_thresholds_verdicts_decide_with(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert "95% interval" in wording.RULE and "(±2% req/s, ±5% latency percentiles)" in wording.RULE
    monkeypatch.setattr(noise, "THROUGHPUT_THRESHOLD", 0.03)
    monkeypatch.setattr(noise, "PERCENTILE_THRESHOLD", 0.10)
    monkeypatch.setattr(verdicts, "CONFIDENCE", 0.99)
    changed = wording.rule()
    assert "99% interval" in changed and "(±3% req/s, ±10% latency percentiles)" in changed
    assert "±2%" not in changed and "95%" not in changed


def test_the_noisy_finding_states_the_cv_the_analysis_flags_at(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert findings.noisy_why() == "repetitions vary by more than 5% (CV)"
    monkeypatch.setattr(stats, "NOISY_CV", 0.08)
    assert findings.noisy_why() == "repetitions vary by more than 8% (CV)"


def test_the_slo_has_one_wording() -> None:
    slo = Slo(percentile=99.9, latency_ms=250.0, max_error_rate=0.005)
    assert latency_words(slo) == "p99.9 ≤ 250 ms"
    assert slo_words(slo) == "p99.9 ≤ 250 ms and error rate ≤ 0.50%"
    run = SimpleNamespace(slo=slo)  # what the gate and the findings read of an analysis
    assert gate.slo_rule(run) == findings.slo_text(run) == slo_words(slo)  # type: ignore[arg-type]
