"""The article claims files parse, say what they test, and bad files stop with InputError."""

import copy
import tomllib
from pathlib import Path
from typing import Any

import pytest

from stackbench.config.claims import (
    METRIC_UNITS,
    OrderTest,
    RatioTest,
    claims_from_data,
    claims_path_for,
    load_claims_for,
    parse_claims,
    stacks_read,
)
from stackbench.config.suite import parse_suite
from stackbench.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
CLAIMS_DIR = ROOT / "suites" / "claims"
CLAIMS_FILES = sorted(CLAIMS_DIR.glob("*.toml"))
ARTICLE_SUITES = [
    "php-node-micro",
    "db-html-report",
    "pool-and-cluster",
    "concurrency-sweep",
    "io-vs-cpu",
]
# Stacks an article measured that its suite does not run (yet): their claims are untestable
# until a suite runs them, and say so.
NOT_IN_SUITE = {"db-html-report": {"node-mysql-native", "node-cluster"}}


def test_every_article_suite_has_a_claims_file():
    assert [p.stem for p in CLAIMS_FILES] == sorted(ARTICLE_SUITES)


@pytest.mark.parametrize("path", CLAIMS_FILES, ids=lambda p: p.stem)
def test_claims_file_parses_and_matches_its_suites(path):
    claims = parse_claims(path)
    assert claims.claims, "a claims file states at least one claim"
    assert set(claims.suites) == {path.stem, f"{path.stem}-short"}
    for suite_name in claims.suites:
        assert (ROOT / "suites" / f"{suite_name}.toml").is_file()
        assert load_claims_for(CLAIMS_DIR, suite_name) == claims
    suite = parse_suite(ROOT / "suites" / f"{path.stem}.toml")
    labels = {w.label for w in suite.workloads}
    allowed_stacks = set(suite.stacks) | NOT_IN_SUITE.get(path.stem, set())
    for claim in claims.claims:
        assert claim.source == claims.article
        assert claim.says.endswith("."), claim.id
        assert set(stacks_read(claim.test)) <= allowed_stacks, claim.id
        assert set(claim.requires.params) <= allowed_stacks, claim.id
        for workload in _workloads(claim.test):
            assert workload in labels, (claim.id, workload)


def _workloads(test: Any) -> set[str]:
    names = set(getattr(test, "workloads", None) or ())
    for attr in ("numerator", "denominator", "before", "after"):
        side = getattr(test, attr, None)
        if getattr(side, "workload", None):
            names.add(side.workload)
    if isinstance(getattr(test, "workload", None), str):
        names.add(test.workload)
    return names


def test_a_parsed_claim_has_typed_records():
    claims = parse_claims(CLAIMS_DIR / "php-node-micro.toml")
    hello = next(c for c in claims.claims if c.id == "hello-order")
    assert isinstance(hello.test, OrderTest)
    assert hello.test.levels == (25.0,)
    assert hello.test.stacks == ("php-swoole", "node", "php-fpm-nginx", "node-nginx")
    assert [f.value for f in hello.figures] == [28553.42, 9986.45, 6752.42, 3130.38]
    assert hello.requires.keepalive == "on"
    assert hello.requires.params["php-swoole"] == {"opcache_jit": "off"}
    assoc = next(c for c in claims.claims if c.id == "fpm-beats-node-on-assoc")
    assert isinstance(assoc.test, RatioTest) and assoc.test.article == 2.30
    with pytest.raises(AttributeError):
        hello.id = "x"  # type: ignore[misc]


def test_every_metric_has_a_unit():
    assert METRIC_UNITS["requests_per_s"] == "req/s" and METRIC_UNITS["p80"] == "ms"
    assert METRIC_UNITS["error_rate"] == "fraction" and METRIC_UNITS["script_user"] == "s"


# --- bad files -------------------------------------------------------------------------------
BASE = {
    "article": "004_x.txt",
    "title": "t",
    "suites": ["s"],
    "claim": [
        {
            "id": "c5000-order",
            "says": "Go first.",
            "requires": {"keepalive": "off"},
            "test": {
                "kind": "order",
                "metric": "requests_per_s",
                "workloads": ["sha256?n=1"],
                "levels": [5000],
                "stacks": ["go-nethttp", "node"],
            },
        },
        {
            "id": "n1000-node-drops",
            "says": "Node drops.",
            "test": {
                "kind": "ratio_change",
                "metric": "requests_per_s",
                "numerator": {"stack": "node"},
                "denominator": {"stack": "go-nethttp"},
                "before": {"workload": "sha256?n=1"},
                "after": {"workload": "sha256?n=1000"},
                "expect": "less",
                "threshold": 0.8,
                "levels": [300],
            },
        },
    ],
}


def bad(change: Any) -> str:
    data = copy.deepcopy(BASE)
    change(data)
    with pytest.raises(InputError) as info:
        claims_from_data(Path("bad.toml"), data)
    return str(info.value)


def test_base_is_good():
    assert len(claims_from_data(Path("ok.toml"), copy.deepcopy(BASE)).claims) == 2


def test_columns_name_the_articles_figures():
    data = {**copy.deepcopy(BASE), "columns": ["time_per_request_all", "p80", "errors"]}
    assert claims_from_data(Path("ok.toml"), data).columns == (
        "time_per_request_all",
        "p80",
        "errors",
    )
    assert claims_from_data(Path("ok.toml"), copy.deepcopy(BASE)).columns == ()


def first_test(d: dict[str, Any]) -> dict[str, Any]:
    return d["claim"][0]["test"]


def second_test(d: dict[str, Any]) -> dict[str, Any]:
    return d["claim"][1]["test"]


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda d: d.update(colour="red"),
            "bad.toml: Object contains unknown field `colour` (allowed: article, title, suites, "
            "claim, columns, stand_in)",
        ),
        (
            lambda d: d["claim"][0].update(colour="red"),
            "bad.toml: claim 'c5000-order' (the 1st [[claim]]): Object contains unknown field "
            "`colour` (allowed: id, says, test, source, figures, requires, assumes, stand_in)",
        ),
        (
            lambda d: first_test(d).update(colour="red"),
            "bad.toml: claim 'c5000-order' (the 1st [[claim]]), key 'test': Object "
            "contains unknown "
            "field `colour` (allowed: metric, stacks, workloads, levels, min_ratio)",
        ),
        (
            lambda d: second_test(d)["numerator"].update(colour="red"),
            "key 'test.numerator': Object contains unknown field `colour` (allowed: stack, workload, "  # noqa: E501 - the message as printed
            "level, metric)",
        ),
        (
            lambda d: first_test(d).update(kind="sorted"),
            "key 'test.kind': Invalid value 'sorted' (allowed: kind = order, ratio, ratio_change, "
            "threshold, shape, scatter, breakpoint)",
        ),
        (
            lambda d: first_test(d).update(metric="rps"),
            "key 'test.metric': Invalid enum value 'rps' (allowed: error_rate, errors,",
        ),
        (
            lambda d: second_test(d).update(expect="bigger"),
            "key 'test.expect': Invalid enum value 'bigger' (allowed: greater, less, near)",
        ),
        (
            lambda d: second_test(d).update(threshold="1"),
            "key 'test.threshold': Expected `float`, got `str`",
        ),
        (
            lambda d: second_test(d).update(threshold=-1),
            "key 'test.threshold': Expected `float` > 0.0",
        ),
        (
            lambda d: first_test(d).update(levels=[0]),
            "key 'test.levels[0]': Expected `float` > 0.0",
        ),
        (
            lambda d: d["claim"][0]["requires"].update(keepalive="maybe"),
            "key 'requires.keepalive': Invalid enum value 'maybe' (allowed: off, on)",
        ),
        (
            lambda d: d["claim"][0]["requires"].update(params={"php-apache": {"workers": 150}}),
            "key 'requires.params': Expected `str`, got `int` (write parameter values as strings, "
            'e.g. "150")',
        ),
        (lambda d: d["claim"][0].pop("says"), "Object missing required field `says`"),
        (
            lambda d: d["claim"][1].update(id="c5000-order"),
            "claim 'c5000-order' (the 2nd [[claim]]): key 'id': another claim has this id",
        ),
        (lambda d: d["claim"][1].update(id="Bad Id"), "key 'id': use lower-case letters"),
        (
            lambda d: d["claim"][1].update(says="red \x1b[31m text"),
            "key 'says': control characters are not allowed",
        ),
        (
            lambda d: d["claim"][0].update(figures=[{"label": "go\n", "value": 1, "unit": "x"}]),
            "key 'figures[0].label': control characters are not allowed",
        ),
        (lambda d: d["claim"][1].update(says="x" * 601), "Expected `str` of length <= 600"),
        (
            lambda d: d.update(article="../../etc/passwd"),
            "key 'article': a file name of ../shared/articles/",
        ),
        (lambda d: d.update(claim="x"), "bad.toml: key 'claim': Expected `array`, got `str`"),
        (
            lambda d: first_test(d).update(stacks=["go-nethttp"]),
            "key 'stacks': at least two entries, each stack once",
        ),
        (
            lambda d: first_test(d).update(stacks=["node", ["go-nethttp", "node"]]),
            "key 'stacks': at least two entries, each stack once",
        ),
        (
            lambda d: first_test(d).update(workloads=[]),
            "key 'workloads': name at least one workload",
        ),
        (
            lambda d: second_test(d).update(expect="near"),
            "key 'article': expect = \"near\" compares with the article's ratio, so give it",
        ),
        (
            lambda d: second_test(d).update(workloads=["sha256?n=1"]),
            "key 'workloads': both sides already name their workload",
        ),
        (
            lambda d: second_test(d).update(after={"workload": "sha256?n=1"}),
            "keys 'before'/'after': the two conditions are the same",
        ),
        (
            lambda d: d["claim"][1].update(
                test={
                    "kind": "ratio",
                    "metric": "requests_per_s",
                    "numerator": {"stack": "a"},
                    "denominator": {"stack": "b"},
                    "expect": "greater",
                }
            ),
            "key 'workloads': missing (or name the workload on both sides)",
        ),
        (
            lambda d: d["claim"][1].update(
                test={
                    "kind": "ratio",
                    "metric": "script_wall",
                    "numerator": {"stack": "a"},
                    "denominator": {"stack": "b"},
                    "expect": "greater",
                    "workloads": ["w"],
                    "levels": [20],
                }
            ),
            "key 'levels': a script timing has no load level",
        ),
        (
            lambda d: d["claim"][1].update(
                test={
                    "kind": "ratio",
                    "metric": "script_wall",
                    "numerator": {"stack": "a"},
                    "denominator": {"stack": "a", "metric": "p99"},
                    "expect": "greater",
                    "workloads": ["w"],
                }
            ),
            "script metrics (script_wall, script_user, script_cpu) cannot be mixed",
        ),
        (
            lambda d: d["claim"][1].update(
                test={"kind": "threshold", "metric": "errors", "stacks": ["a"], "workloads": ["w"]}
            ),
            "give 'min', 'max' or both",
        ),
        (
            lambda d: d["claim"][1].update(
                test={
                    "kind": "threshold",
                    "metric": "errors",
                    "stacks": ["a"],
                    "workloads": ["w"],
                    "min": 5,
                    "max": 1,
                }
            ),
            "key 'min': 5 is above max 1",
        ),
        (
            lambda d: d["claim"][1].update(
                test={
                    "kind": "shape",
                    "metric": "requests_per_s",
                    "stacks": ["a"],
                    "workloads": ["w"],
                    "from_level": 200,
                    "to_level": 20,
                    "expect": "flat",
                    "tolerance": 0.1,
                }
            ),
            "key 'from_level': must be below to_level",
        ),
        (
            lambda d: d["claim"][1].update(
                test={
                    "kind": "breakpoint",
                    "stack": "a",
                    "workload": "w",
                    "metric": "p99",
                    "above": 3000,
                    "expect": "within",
                }
            ),
            "key 'range': expect = \"within\" needs it",
        ),
        (
            lambda d: d["claim"][1].update(
                test={
                    "kind": "breakpoint",
                    "stack": "a",
                    "workload": "w",
                    "metric": "p99",
                    "above": 3000,
                    "expect": "none",
                    "up_to": 10000,
                    "other": "b",
                }
            ),
            "key 'other': not used with expect = \"none\"",
        ),
        (
            lambda d: d["claim"][1].update(
                test={
                    "kind": "breakpoint",
                    "stack": "a",
                    "workload": "w",
                    "metric": "p99",
                    "above": 3000,
                    "expect": "before",
                    "other": "a",
                }
            ),
            "key 'other': another stack than 'a'",
        ),
        (
            lambda d: d.update(columns=["p80", "colour"]),
            "key 'columns[1]': Invalid enum value 'colour' (allowed: errors, mean_latency, p80, ",
        ),
        (lambda d: d.update(columns=["p80", "p80"]), "key 'columns': 'p80' is listed twice"),
    ],
)
def test_malformed_claims_are_input_errors(change, message):
    assert message in bad(change)


def test_unreadable_and_hostile_files(tmp_path):
    not_toml = tmp_path / "a.toml"
    not_toml.write_text("article = \n")
    with pytest.raises(InputError, match="a.toml: not valid TOML"):
        parse_claims(not_toml)
    binary = tmp_path / "b.toml"
    binary.write_bytes(b'article = "\xff"\n')
    with pytest.raises(InputError, match="b.toml: not UTF-8 text"):
        parse_claims(binary)
    huge = tmp_path / "c.toml"
    huge.write_text("# " + "x" * 1_000_001)
    with pytest.raises(InputError, match="c.toml: 1000003 bytes; a claims file holds at most"):
        parse_claims(huge)
    with pytest.raises(InputError, match="cannot read the claims file"):
        parse_claims(tmp_path / "missing.toml")
    many = copy.deepcopy(BASE)
    many["claim"] = [dict(BASE["claim"][0], id=f"c{i}") for i in range(501)]
    with pytest.raises(InputError, match="501 claims; at most 500"):
        claims_from_data(Path("d.toml"), many)


def test_suite_names_never_escape_the_claims_directory(tmp_path):
    (tmp_path / "x.toml").write_text("")
    assert claims_path_for(tmp_path, "x") == tmp_path / "x.toml"
    assert claims_path_for(tmp_path, "x-short") == tmp_path / "x.toml"
    assert claims_path_for(tmp_path, "../x") is None
    assert claims_path_for(tmp_path, "..") is None
    assert claims_path_for(tmp_path, "quick") is None  # a suite without an article
    assert load_claims_for(tmp_path, "quick") is None


def test_a_suite_must_be_listed_by_the_file_it_uses(tmp_path):
    text = (CLAIMS_DIR / "io-vs-cpu.toml").read_text()
    (tmp_path / "io-vs-cpu.toml").write_text(text)
    data = tomllib.loads(text)
    assert "io-vs-cpu-short" in data["suites"]
    with pytest.raises(
        InputError, match="the suite 'io-vs-cpu-tiny' uses this file but is not listed"
    ):
        (tmp_path / "io-vs-cpu-tiny.toml").write_text(text)
        load_claims_for(tmp_path, "io-vs-cpu-tiny")
