"""scripts/findings.py rewrites only the articles it ran: the others' sections stay as written."""

import pytest

from scripts import findings


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
