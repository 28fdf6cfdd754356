"""scripts/findings.py rewrites only the articles it ran: the others' sections stay as written."""

import pytest

from scripts import findings
from stackbench.store.store import RunData, Store
from tests.store.test_store import case, level, run_record, settings


def test_each_article_section_is_found_by_its_claims_title():
    text = findings.FINDINGS.read_text(encoding="utf-8")
    body = text.partition(findings.BEGIN)[2].partition(findings.END)[0]
    sections = findings.current_sections(body)
    assert set(sections) == set(findings.ARTICLE_SUITES)
    assert all(s.startswith("## ") for s in sections.values())


def test_writing_one_article_keeps_the_others_in_order(tmp_path, monkeypatch):
    original = findings.FINDINGS.read_text(encoding="utf-8")
    doc = tmp_path / "findings.md"
    doc.write_text(original, encoding="utf-8")
    monkeypatch.setattr(findings, "FINDINGS", doc)
    before = findings.current_sections(doc.read_text(encoding="utf-8"))
    title = before["io-vs-cpu"].splitlines()[0]
    findings.write({"io-vs-cpu": f"{title}\n\nnew text\n"})
    text = doc.read_text(encoding="utf-8")
    after = findings.current_sections(text.partition(findings.BEGIN)[2])
    assert after["io-vs-cpu"].startswith(f"{title}\n\nnew text")
    for article in findings.ARTICLE_SUITES:
        if article != "io-vs-cpu":
            assert after[article].rstrip("\n") == before[article].rstrip("\n"), article
    order = [text.index(before[a].splitlines()[0]) for a in findings.ARTICLE_SUITES]
    assert order == sorted(order)
    assert text.partition(findings.BEGIN)[0] == original.partition(findings.BEGIN)[0]
    assert text.partition(findings.END)[2] == original.partition(findings.END)[2]


def test_an_unknown_article_is_refused_with_the_choices():
    with pytest.raises(SystemExit):
        findings.main(["--suites", "nope", "--from", "/nonexistent"])


def test_a_full_suite_runs_until_decided_and_a_short_one_does_not(tmp_path):
    full = findings.run_command("pool-and-cluster", tmp_path, full=True)
    assert full[-3:] == ["--out", str(tmp_path / "pool-and-cluster"), "--until-decided"]
    assert "--budget" not in full  # the rounds spend what the suite's load_budget_min leaves
    short = findings.run_command("pool-and-cluster-short", tmp_path, full=False)
    assert "--until-decided" not in short


def _stored(looks: int, repetitions: int) -> RunData:
    """A run of repeat = 3 with `repetitions` of one 12-s level, `looks` decision looks."""
    store = Store(":memory:")
    run = store.start_run(run_record(settings=settings(repeat=3, decision_looks=looks)))
    case_id = store.add_case(case(run))
    for rep in range(repetitions):
        store.add_level(level(case_id, 0, repetition=rep, duration_s=12.0))
    return store.load_run(run)


def test_the_run_line_says_what_until_decided_added():
    plain = _stored(1, 3)
    assert findings._flags(plain.run.settings) == ""
    assert findings._rounds_said(plain) == ""
    none = _stored(6, 3)
    assert findings._flags(none.run.settings) == " --until-decided"
    assert findings._rounds_said(none) == "; until-decided added no round after the plan"
    two = _stored(6, 5)
    assert findings._rounds_said(two) == (
        "; until-decided rounds added 2 level repetition(s) after the plan, 0.4 of its "
        "1.0 min of load"
    )


def test_a_worktree_script_refuses_to_write_another_checkouts_findings(tmp_path):
    """Run from a git worktree with the venv's editable install of main, the script would run
    main's code and write main's docs/findings.md: it names both checkouts and stops."""
    assert findings.imported_elsewhere(findings.REPO_ROOT) is None
    why = findings.imported_elsewhere(tmp_path)
    assert why is not None
    assert str(tmp_path) in why and f"PYTHONPATH={tmp_path}" in why
