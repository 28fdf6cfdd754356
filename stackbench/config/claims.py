"""Parse an article's claims file (suites/claims/<article-suite>.toml) into frozen records.

Each article suite states its article's claims as data: an id, a sentence in our own words, the
article file it comes from, the article's figures, the requirements without which the claim
cannot be tested here, and one machine-checkable test from a small closed vocabulary. The
vocabulary (`kind`) and what each kind confirms, with its tolerance, is documented in
`suites/claims/README.md`; `stackbench.analysis.claims` evaluates the tests on a stored run.

Parsing is strict: unknown keys, wrong types, unknown kinds or metrics and inconsistent tests
raise `InputError` naming the file, the claim, the key and what is allowed. The files are
read by a process that runs as root, so sizes and text are bounded too.
"""

import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from stackbench.errors import InputError

MAX_FILE_BYTES = 1_000_000
MAX_CLAIMS = 500
MAX_TEXT = 600
# Unless a claim says otherwise, a level it reads must have sent this many requests: one burst
# of a few hundred requests is over in tens of milliseconds and measures the start of the
# level, not the server. No least duration by default: the articles counted requests (ab -n),
# and a level too short for a steady window has no evidence, so it decides nothing anyway.
DEFAULT_MIN_REQUESTS = 1000
DEFAULT_MIN_SECONDS = 0.0
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,79}$")
# A suite name becomes a file name: keep it to plain names (no '/', no '..').
SUITE_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$")
SHORT_SUFFIX = "-short"

# --- metrics ---------------------------------------------------------------------------------
# Per-level metrics (read from a stored level; one value per repetition).
LEVEL_METRICS: dict[str, str] = {
    "requests_per_s": "req/s",
    "mean_latency": "ms",
    "p50": "ms",
    "p75": "ms",
    "p80": "ms",
    "p90": "ms",
    "p99": "ms",
    "p99_9": "ms",
    "max_latency": "ms",
    # ab's "time per request (mean)": connections x duration / completed.
    "time_per_request": "ms",
    # ab's "time per request (mean, across all concurrent requests)": duration / completed.
    "time_per_request_all": "ms",
    # Bytes received per second (headers and bodies), 2**20 bytes to the MiB.
    "transfer": "MiB/s",
    "error_rate": "fraction",  # 0..1, as the suites' max_error_rate; shown as a percent
    "errors": "failed requests",
    "server_cpu": "% of a core",
    "service_cpu": "% of a core",
}
# Standalone timings (`script_iterations`): per iteration, no level.
SCRIPT_METRICS: dict[str, str] = {
    "script_wall": "s",
    "script_user": "s",
    "script_cpu": "s",
}
METRIC_UNITS: dict[str, str] = {**LEVEL_METRICS, **SCRIPT_METRICS}


def metric_unit(metric: str) -> str:
    return METRIC_UNITS[metric]


# The figures an article's tables showed besides req/s, by metric name: `columns` of a claims
# file adds them to the terminal's per-workload table (report/tables.py FIGURES renders each;
# summary.md and report.html show them all in every run).
COLUMNS = (
    "mean_latency",
    "p80",
    "time_per_request",
    "time_per_request_all",
    "transfer",
    "errors",
    "service_cpu",
)
Column = Literal[
    "mean_latency",
    "p80",
    "time_per_request",
    "time_per_request_all",
    "transfer",
    "errors",
    "service_cpu",
]


Metric = Literal[
    "requests_per_s",
    "mean_latency",
    "p50",
    "p75",
    "p80",
    "p90",
    "p99",
    "p99_9",
    "max_latency",
    "time_per_request",
    "time_per_request_all",
    "transfer",
    "error_rate",
    "errors",
    "server_cpu",
    "service_cpu",
    "script_wall",
    "script_user",
    "script_cpu",
]
Expect = Literal["greater", "less", "near"]
Level = Annotated[float, msgspec.Meta(gt=0)]
Text = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_TEXT)]
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=120)]
Positive = Annotated[float, msgspec.Meta(gt=0)]
NonNegative = Annotated[float, msgspec.Meta(ge=0)]


class _Record(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    pass


class Figure(_Record, frozen=True):
    """One figure as the article printed it, e.g. ("php-fpm-nginx hello", 6752.42, "req/s")."""

    label: Text
    value: float
    unit: Name


class Side(_Record, frozen=True):
    """One side of a ratio: a stack, and optionally a fixed workload, level or metric.

    `level = "peak"` takes the stack's best median over every level of the workload."""

    stack: Name
    workload: Name | None = None
    level: Level | Literal["peak"] | None = None
    metric: Metric | None = None


class Condition(_Record, frozen=True):
    """The workload and/or level one ratio of a `ratio_change` is taken at."""

    workload: Name | None = None
    level: Level | None = None


class Span(_Record, frozen=True):
    """A stack over a range of levels (both ends must be levels of the suite)."""

    stack: Name
    from_level: Level
    to_level: Level


class _Test(_Record, frozen=True, tag_field="kind"):
    pass


class OrderTest(_Test, frozen=True, tag="order"):
    """Stacks from the largest metric value to the smallest. An entry may be a group of stacks
    (["go-nethttp", "java-servlet"]): every member beats every member of the next entry."""

    metric: Metric
    stacks: tuple[Name | tuple[Name, ...], ...]
    workloads: tuple[Name, ...] | None = None
    levels: tuple[Level, ...] | Literal["all"] | None = None
    min_ratio: Positive = 1.0


class _RatioFields(_Test, frozen=True, kw_only=True):
    """What a ratio test and a ratio-change test share: the stacks compared, the expectation
    and the article's figure."""

    metric: Metric
    numerator: Side
    denominator: Side
    expect: Expect
    workloads: tuple[Name, ...] | None = None
    levels: tuple[Level, ...] | Literal["all"] | None = None
    threshold: Positive = 1.0
    # With expect = "greater": the band's upper end too (threshold..upper), for a claim that
    # states a direction and a limit ("about the same, node slightly faster": 1.00-1.33x).
    upper: Positive | None = None
    article: Positive | None = None
    tolerance: NonNegative = 0.25


class RatioTest(_RatioFields, frozen=True, tag="ratio"):
    """numerator / denominator: `greater` (>= threshold), `less` (<= threshold) or `near`
    (within article x/÷ (1 + tolerance))."""


class RatioChangeTest(_RatioFields, frozen=True, kw_only=True, tag="ratio_change"):
    """(numerator / denominator at `after`) / (the same at `before`): how one stack's standing
    against another changes from one workload or level to another."""

    before: Condition
    after: Condition


class ThresholdTest(_Test, frozen=True, tag="threshold"):
    """The metric of each stack at each workload and level lies in [min, max]; with
    `at_least`, that many of those points suffice."""

    metric: Metric
    stacks: tuple[Name, ...]
    workloads: tuple[Name, ...]
    levels: tuple[Level, ...] | Literal["all"] | None = None
    min: float | None = None
    max: float | None = None
    at_least: Annotated[int, msgspec.Meta(ge=1)] | None = None


class ShapeTest(_Test, frozen=True, tag="shape"):
    """Over the levels from `from_level` to `to_level`: `flat` (largest / smallest median
    <= 1 + tolerance) or `proportional` (the same for median / level)."""

    metric: Metric
    stacks: tuple[Name, ...]
    workloads: tuple[Name, ...]
    from_level: Level
    to_level: Level
    expect: Literal["flat", "proportional"]
    tolerance: NonNegative


class ScatterTest(_Test, frozen=True, tag="scatter"):
    """Jitter: the root-mean-square relative distance of each level's median from the
    stack's smoothed trend, over a span; numerator span / denominator span >= threshold."""

    metric: Metric
    workload: Name
    numerator: Span
    denominator: Span
    threshold: Positive = 1.0


class BreakpointTest(_Test, frozen=True, tag="breakpoint"):
    """The first level (lowest first) at which the metric exceeds `above` or the error rate
    exceeds `max_error_rate`: `within` range, `none` up to `up_to`, or `before` the first
    failing level of `other`."""

    stack: Name
    workload: Name
    metric: Metric
    above: Positive
    expect: Literal["within", "none", "before"]
    max_error_rate: NonNegative | None = None
    range: tuple[Level, Level] | None = None
    up_to: Level | None = None
    other: Name | None = None


Test = (
    OrderTest
    | RatioTest
    | RatioChangeTest
    | ThresholdTest
    | ShapeTest
    | ScatterTest
    | BreakpointTest
)
TEST_KINDS = ("order", "ratio", "ratio_change", "threshold", "shape", "scatter", "breakpoint")


class Requirements(_Record, frozen=True):
    """What this machine and run must give for the claim to be testable at all. The stacks,
    workloads and levels a test reads are required implicitly."""

    server_cores: Annotated[int, msgspec.Meta(ge=1)] = 1
    keepalive: Literal["on", "off"] | None = None
    drivers: tuple[Literal["native", "wrk", "ab"], ...] = ()
    min_warmup_s: NonNegative = 0.0
    # The least measurement a level must give for the claim to read it: completed requests
    # and seconds of load (below either, the figure is too little data to stand for the
    # article's). Script metrics have no level and ignore both.
    min_requests: Annotated[int, msgspec.Meta(ge=0)] = DEFAULT_MIN_REQUESTS
    min_seconds: NonNegative = DEFAULT_MIN_SECONDS
    stacks: tuple[Name, ...] = ()
    # Stack parameters in force, e.g. {php-fpm-nginx = {db_strategy = "per-request"}}.
    params: dict[Name, dict[Name, Name]] = {}


class StandIn(_Record, frozen=True):
    """A stack of the suite read in place of one the article ran, where the server has fewer
    cores than a claim needs (`[[stand_in]]`; a claim opts in with `stand_in`): the claim is
    then read per core, e.g. one Node process with the pool on 1 core for the article's 4
    cluster workers with the pool on 4 cores, against PHP on the same 1 core."""

    stack: Name  # the stack the claims name, as the article ran it (node-cluster-pool)
    by: Name  # the suite's stack read in its place (node-pool)
    article: Text  # what the article's stack was ("4 workers with the pool on 4 cores")
    ours: Text  # what the stand-in is ("one Node process with the pool")
    # Workloads where another stack of the suite stands in (hello: plain node), and why
    on: dict[Name, Name] = {}
    on_why: Text | None = None


class Claim(_Record, frozen=True):
    id: Name
    says: Text
    test: Test
    source: Name | None = None
    figures: tuple[Figure, ...] = ()
    requires: Requirements = Requirements()
    # A premise the test needs that the article does not state (our reading, not its words):
    # shown with the claim wherever it is reported.
    assumes: Text | None = None
    # The file's [[stand_in]] tables this claim may be read with below its server cores,
    # where one process per core reads it faithfully (the file names them by `stack`; the
    # parser puts the tables here).
    stand_in: tuple[StandIn, ...] = ()


class _File(_Record, frozen=True):
    article: Name
    title: Text
    suites: tuple[Name, ...]
    claim: tuple[Claim, ...]
    columns: tuple[Column, ...] = ()
    stand_in: tuple[StandIn, ...] = ()


class ClaimsFile(msgspec.Struct, frozen=True):
    """A parsed claims file; every claim's `source` is filled (the file's article if unset)."""

    path: Path
    article: str
    title: str
    suites: tuple[str, ...]
    claims: tuple[Claim, ...]
    columns: tuple[str, ...] = ()  # the article's figures, as extra terminal columns


# --- reading ---------------------------------------------------------------------------------
def parse_claims(path: Path) -> ClaimsFile:
    text = _read(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML: {exc}") from exc
    return claims_from_data(path, data)


def claims_from_data(path: Path, data: dict[str, Any]) -> ClaimsFile:
    """The checked records of one claims file's TOML data (split out for tests)."""
    data = _with_stand_ins(path, data)
    try:
        raw = msgspec.convert(data, _File, strict=True)
    except msgspec.ValidationError as exc:
        raise InputError(_explain(path, data, str(exc))) from None
    if len(raw.claim) > MAX_CLAIMS:
        raise InputError(f"{path}: {len(raw.claim)} claims; at most {MAX_CLAIMS}")
    _check_text(path, "article", raw.article)
    if "/" in raw.article or raw.article.startswith("."):
        raise InputError(
            f"{path}: key 'article': a file name of ../shared/articles/, got {raw.article!r}"
        )
    twice = sorted({c for c in raw.columns if raw.columns.count(c) > 1})
    if twice:
        raise InputError(f"{path}: key 'columns': '{twice[0]}' is listed twice")
    claims = tuple(msgspec.structs.replace(c, source=c.source or raw.article) for c in raw.claim)
    seen: set[str] = set()
    for index, claim in enumerate(claims):
        where = f"{path}: claim '{claim.id}' (the {_ordinal(index + 1)} [[claim]])"
        if not ID_PATTERN.match(claim.id):
            raise InputError(
                f"{where}: key 'id': use lower-case letters, digits and '-' (at most 80)"
            )
        if claim.id in seen:
            raise InputError(f"{where}: key 'id': another claim has this id")
        seen.add(claim.id)
        for key, value in _texts(claim):
            _check_text(where, key, value)
        _check_test(where, claim.test)
        _check_claim_stand_ins(where, claim)
    _check_stand_ins(path, raw.stand_in, claims)
    return ClaimsFile(path, raw.article, raw.title, raw.suites, claims, raw.columns)


def claims_path_for(claims_dir: Path, suite_name: str) -> Path | None:
    """The claims file of a suite, or None when its article has none. `x-short` uses `x`'s
    file; the file must list the suite in `suites`."""
    if not SUITE_NAME_PATTERN.match(suite_name):
        return None
    for name in (suite_name, suite_name.removesuffix(SHORT_SUFFIX)):
        candidate = claims_dir / f"{name}.toml"
        if candidate.is_file():
            return candidate
    return None


def load_claims_for(claims_dir: Path, suite_name: str) -> ClaimsFile | None:
    path = claims_path_for(claims_dir, suite_name)
    if path is None:
        return None
    claims = parse_claims(path)
    if suite_name not in claims.suites:
        raise InputError(
            f"{path}: key 'suites': the suite '{suite_name}' uses this file but "
            f"is not listed ({', '.join(claims.suites)})"
        )
    return claims


def _read(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InputError(f"{path}: {size} bytes; a claims file holds at most {MAX_FILE_BYTES}")
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise InputError(f"{path}: cannot read the claims file: {exc.strerror}") from exc


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# --- semantic checks -------------------------------------------------------------------------
def _with_stand_ins(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """The data with each claim's `stand_in` names replaced by the file's [[stand_in]] tables
    they name (checked first, so that an error in a table is told at the table)."""
    tables = data.get("stand_in", [])
    try:
        declared = msgspec.convert(tables, tuple[StandIn, ...], strict=True)
    except msgspec.ValidationError as exc:
        message = str(exc).replace(" - at `$", " - at `$.stand_in", 1)
        raise InputError(_explain(path, data, message)) from None
    by_stack: dict[str, Any] = {}
    for index, (stand, table) in enumerate(zip(declared, tables, strict=True)):
        if stand.stack in by_stack:
            raise InputError(
                f"{path}: [[stand_in]] '{stand.stack}' (the {_ordinal(index + 1)}): key "
                "'stack': another [[stand_in]] has this stack"
            )
        by_stack[stand.stack] = table
    claims = data.get("claim")
    if not isinstance(claims, list):
        return data
    out = []
    for index, claim in enumerate(claims):
        names = claim.get("stand_in") if isinstance(claim, dict) else None
        if names is None:
            out.append(claim)
            continue
        where = _where(path, data, ["claim", index, "stand_in"])
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise InputError(f"{where}: a list of the stacks of the file's [[stand_in]] tables")
        unknown = [n for n in names if n not in by_stack]
        if unknown:
            known = ", ".join(by_stack) or "none"
            raise InputError(
                f"{where}: '{unknown[0]}' is the stack of no [[stand_in]] of this file "
                f"(declared: {known})"
            )
        if len(set(names)) != len(names):
            raise InputError(f"{where}: a stack is named twice")
        out.append({**claim, "stand_in": [by_stack[n] for n in names]})
    return {**data, "claim": out}


def _check_stand_ins(path: Path, declared: tuple[StandIn, ...], claims: tuple[Claim, ...]) -> None:
    """Each [[stand_in]] (each declared once: _with_stand_ins): another stack than the one it
    stands in for, its `on` stacks explained, and named by a claim (a table no claim reads is
    a mistake)."""
    for index, stand in enumerate(declared):
        where = f"{path}: [[stand_in]] '{stand.stack}' (the {_ordinal(index + 1)})"
        if stand.by == stand.stack or stand.stack in stand.on.values():
            raise InputError(f"{where}: key 'by': a stack cannot stand in for itself")
        if bool(stand.on) != (stand.on_why is not None):
            raise InputError(
                f"{where}: keys 'on'/'on_why': say why ('on_why') another stack stands in on "
                "the workloads 'on' names, and give 'on_why' only with 'on'"
            )
        for key, value in (("article", stand.article), ("ours", stand.ours)):
            _check_text(where, key, value)
        _check_text(where, "on_why", stand.on_why or "")
        if not any(stand in c.stand_in for c in claims):
            raise InputError(f"{where}: no claim names it in 'stand_in'; remove it or use it")


def _check_claim_stand_ins(where: str, claim: Claim) -> None:
    """A claim's stand-ins replace stacks its test reads, below cores it requires, and never
    by a stack the test reads besides (a ratio of node against itself decides nothing)."""
    if not claim.stand_in:
        return
    w = f"{where}: key 'stand_in'"
    if claim.requires.server_cores < 2:
        raise InputError(
            f"{w}: a stand-in is read where the server has fewer cores than the claim's "
            "requires.server_cores; this claim requires 1, so it would never be read"
        )
    read = stacks_read(claim.test)
    replaced = {s.stack for s in claim.stand_in}
    for stand in claim.stand_in:
        if stand.stack not in read:
            raise InputError(f"{w}: the test does not read '{stand.stack}' ({', '.join(read)})")
    workloads = set(workloads_read(claim.test))
    kept = {n for n in read if n not in replaced}
    taken: dict[str, str] = {}
    for stand in claim.stand_in:
        used = {stand.by} | {s for w_, s in stand.on.items() if not workloads or w_ in workloads}
        for name in sorted(used):
            other = taken.get(name) or (name if name in kept else None)
            if other is not None:
                raise InputError(
                    f"{w}: '{name}' would stand in for '{stand.stack}', but the test reads "
                    f"it for '{other}' too, so the two sides would be one stack"
                )
            taken[name] = stand.stack


def _texts(claim: Claim) -> Iterator[tuple[str, str]]:
    yield "says", claim.says
    yield "source", claim.source or ""
    yield "assumes", claim.assumes or ""
    for i, fig in enumerate(claim.figures):
        yield f"figures[{i}].label", fig.label
        yield f"figures[{i}].unit", fig.unit


def _check_text(where: Path | str, key: str, value: str) -> None:
    """Text ends up in terminals and reports: no control characters (escape sequences)."""
    if any(ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0 for ch in value):
        raise InputError(f"{where}: key '{key}': control characters are not allowed")


def _check_test(where: str, test: Test) -> None:
    w = f"{where}: [claim.test] kind '{kind_of(test)}'"
    _check_metric_scope(w, test)
    if isinstance(test, OrderTest):
        names = [n for entry in test.stacks for n in _group(entry)]
        if len(test.stacks) < 2 or len(set(names)) != len(names):
            raise InputError(f"{w}: key 'stacks': at least two entries, each stack once")
        if any(isinstance(e, tuple) and not e for e in test.stacks):
            raise InputError(f"{w}: key 'stacks': an empty group")
    elif isinstance(test, RatioTest | RatioChangeTest):
        _check_expect(w, test.expect, test.article, test.upper, test.threshold)
        if isinstance(test, RatioChangeTest) and test.before == test.after:
            raise InputError(f"{w}: keys 'before'/'after': the two conditions are the same")
    elif isinstance(test, ThresholdTest):
        if test.min is None and test.max is None:
            raise InputError(f"{w}: give 'min', 'max' or both")
        if test.min is not None and test.max is not None and test.min > test.max:
            raise InputError(f"{w}: key 'min': {test.min:g} is above max {test.max:g}")
        if not test.stacks:
            raise InputError(f"{w}: key 'stacks': name at least one stack")
    elif isinstance(test, ShapeTest):
        if test.from_level >= test.to_level:
            raise InputError(f"{w}: key 'from_level': must be below to_level")
        if not test.stacks:
            raise InputError(f"{w}: key 'stacks': name at least one stack")
    elif isinstance(test, ScatterTest):
        for key, span in (("numerator", test.numerator), ("denominator", test.denominator)):
            if span.from_level >= span.to_level:
                raise InputError(f"{w}: key '{key}.from_level': must be below to_level")
    elif isinstance(test, BreakpointTest):
        _check_breakpoint(w, test)


def _check_metric_scope(w: str, test: Test) -> None:
    """Script metrics have no level; level metrics need one."""
    metrics = {test.metric}
    if isinstance(test, RatioTest | RatioChangeTest):
        metrics |= {m for m in (test.numerator.metric, test.denominator.metric) if m}
    script = {m for m in metrics if m in SCRIPT_METRICS}
    if script and script != metrics:
        raise InputError(
            f"{w}: key 'metric': script metrics ({', '.join(SCRIPT_METRICS)}) "
            "cannot be mixed with per-level metrics"
        )
    if script:
        if not isinstance(test, RatioTest | OrderTest | ThresholdTest):
            raise InputError(
                f"{w}: key 'metric': script metrics only work with kinds order, ratio and threshold"
            )
        levels = [getattr(test, "levels", None)]
        if isinstance(test, RatioTest):
            levels += [test.numerator.level, test.denominator.level]
        if any(v is not None for v in levels):
            raise InputError(f"{w}: key 'levels': a script timing has no load level")
    if getattr(test, "workloads", None) == ():
        raise InputError(f"{w}: key 'workloads': name at least one workload")
    if isinstance(test, RatioTest | RatioChangeTest | OrderTest):
        _check_iteration(w, test)


def _check_iteration(w: str, test: OrderTest | RatioTest | RatioChangeTest) -> None:
    """A workload or level is either fixed on the sides or iterated by the test, not both."""
    if isinstance(test, OrderTest):
        if test.workloads is None:
            raise InputError(f"{w}: key 'workloads': missing")
        return
    sides = (test.numerator, test.denominator)
    conditions = (test.before, test.after) if isinstance(test, RatioChangeTest) else ()
    workload_fixed = all(s.workload for s in sides) or (
        bool(conditions) and all(c.workload for c in conditions)
    )
    level_fixed = all(s.level is not None for s in sides) or (
        bool(conditions) and all(c.level is not None for c in conditions)
    )
    if workload_fixed and test.workloads is not None:
        raise InputError(f"{w}: key 'workloads': both sides already name their workload")
    if not workload_fixed and test.workloads is None:
        raise InputError(f"{w}: key 'workloads': missing (or name the workload on both sides)")
    if level_fixed and test.levels is not None:
        raise InputError(f"{w}: key 'levels': both sides already name their level")


def _check_expect(
    w: str, expect: str, article: float | None, upper: float | None = None, threshold: float = 1.0
) -> None:
    if upper is not None and (expect != "greater" or upper <= threshold):
        raise InputError(
            f"{w}: key 'upper': it bounds expect = \"greater\" from above, so it needs "
            'expect = "greater" and a value above the threshold'
        )
    if expect == "near" and article is None:
        raise InputError(
            f"{w}: key 'article': expect = \"near\" compares with the article's ratio, so give it"
        )


def _check_breakpoint(w: str, test: BreakpointTest) -> None:
    if test.metric in SCRIPT_METRICS:
        raise InputError(f"{w}: key 'metric': a breakpoint needs a per-level metric")
    needed = {"within": "range", "none": "up_to", "before": "other"}[test.expect]
    given = {"range": test.range, "up_to": test.up_to, "other": test.other}
    if given[needed] is None:
        raise InputError(f"{w}: key '{needed}': expect = \"{test.expect}\" needs it")
    extra = [k for k, v in given.items() if v is not None and k != needed]
    if extra:
        raise InputError(f"{w}: key '{extra[0]}': not used with expect = \"{test.expect}\"")
    if test.range is not None and test.range[0] > test.range[1]:
        raise InputError(f"{w}: key 'range': [low, high] with low <= high")
    if test.other == test.stack:
        raise InputError(f"{w}: key 'other': another stack than '{test.stack}'")


def _group(entry: str | tuple[str, ...]) -> tuple[str, ...]:
    return (entry,) if isinstance(entry, str) else entry


def order_groups(test: OrderTest) -> tuple[tuple[str, ...], ...]:
    """The order's entries as groups (a single stack is a group of one)."""
    return tuple(_group(e) for e in test.stacks)


def kind_of(test: Test) -> str:
    return str(type(test).__struct_config__.tag)


def stacks_read(test: Test) -> tuple[str, ...]:
    """Every stack a test reads, in the order it names them."""
    if isinstance(test, OrderTest):
        names = [n for g in order_groups(test) for n in g]
    elif isinstance(test, RatioTest | RatioChangeTest):
        names = [test.numerator.stack, test.denominator.stack]
    elif isinstance(test, ThresholdTest | ShapeTest):
        names = list(test.stacks)
    elif isinstance(test, ScatterTest):
        names = [test.numerator.stack, test.denominator.stack]
    else:
        names = [test.stack] + ([test.other] if test.other else [])
    return tuple(dict.fromkeys(names))


def workloads_read(test: Test) -> tuple[str, ...]:
    """Every workload a test names (its `workloads`, its sides' and conditions'), in order;
    empty when it names none (it reads every workload of the suite)."""
    names: list[str] = list(getattr(test, "workloads", None) or ())
    if isinstance(test, RatioTest | RatioChangeTest):
        names += [s.workload for s in (test.numerator, test.denominator) if s.workload]
    if isinstance(test, RatioChangeTest):
        names += [c.workload for c in (test.before, test.after) if c.workload]
    if isinstance(test, ScatterTest | BreakpointTest):
        names.append(test.workload)
    return tuple(dict.fromkeys(names))


# --- error messages --------------------------------------------------------------------------
_SEQUENCE_TYPES = (msgspec.inspect.VarTupleType, msgspec.inspect.ListType)
_PATH_PART = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")


def _explain(path: Path, data: dict[str, Any], message: str) -> str:
    """msgspec's message, located as claim + key, with what the place allows."""
    text, _, at = message.partition(" - at `")
    at = at.rstrip("`")
    parts = [
        m.group(1) if m.group(1) else int(m.group(2))
        for m in _PATH_PART.finditer(at.removeprefix("$"))
    ]
    where = _where(path, data, parts)
    if "[...]" in at and text.startswith("Expected `str`"):
        return f'{where}: {text} (write parameter values as strings, e.g. "150")'
    hint = _allowed(data, parts, text)
    return f"{where}: {text}" + (f" (allowed: {hint})" if hint else "")


def _where(path: Path, data: dict[str, Any], parts: list[str | int]) -> str:
    if len(parts) >= 2 and parts[0] == "claim" and isinstance(parts[1], int):
        claims = data.get("claim")
        claim = claims[parts[1]] if isinstance(claims, list) and parts[1] < len(claims) else {}
        name = claim.get("id") if isinstance(claim, dict) else None
        who = f"claim '{name}'" if isinstance(name, str) else "claim"
        key = _dotted(parts[2:])
        place = f"{path}: {who} (the {_ordinal(parts[1] + 1)} [[claim]])"
        return f"{place}, key '{key}'" if key else place
    key = _dotted(parts)
    return f"{path}: key '{key}'" if key else str(path)


def _dotted(parts: list[str | int]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


def _allowed(data: Any, parts: list[str | int], text: str) -> str:
    """The keys, kinds or values allowed where the error is (empty when nothing helps)."""
    info: Any = msgspec.inspect.type_info(_File)
    node: Any = data
    target = parts
    if text.startswith("Object contains unknown field") or text.startswith(
        "Object missing required field"
    ):
        target = parts  # the error is at the table itself
    elif parts and isinstance(parts[-1], str):
        target = parts[:-1]  # the error is at a key: look at its table
    for part in target:
        info = _resolve(info, node)
        if info is None:
            return ""
        if isinstance(part, int) and isinstance(info, _SEQUENCE_TYPES):
            info = info.item_type
        elif isinstance(part, str) and isinstance(info, msgspec.inspect.StructType):
            info = next((f.type for f in info.fields if f.encode_name == part), None)
        else:
            return ""
        node = node[part] if _indexable(node, part) else None
    info = _resolve(info, node)
    if isinstance(info, msgspec.inspect.LiteralType):  # an entry of a list of names
        return ", ".join(_literal_values(info))
    if not isinstance(info, msgspec.inspect.StructType):
        return ""
    last = parts[-1] if parts and target is not parts else None
    if last is not None and last in (info.tag_field, "kind"):
        return "kind = " + ", ".join(TEST_KINDS)
    if isinstance(last, str):
        field = next((f for f in info.fields if f.encode_name == last), None)
        values = _literal_values(field.type) if field else []
        return ", ".join(values)
    return ", ".join(f.encode_name for f in info.fields)


def _indexable(node: Any, part: str | int) -> bool:
    if isinstance(part, int):
        return isinstance(node, list) and part < len(node)
    return isinstance(node, dict) and part in node


def _resolve(info: Any, node: Any) -> Any:
    """Unwrap unions (a tagged union by the data's `kind`) and optional types."""
    while isinstance(info, msgspec.inspect.UnionType):
        structs = [t for t in info.types if isinstance(t, msgspec.inspect.StructType)]
        if len(structs) > 1:
            kind = node.get("kind") if isinstance(node, dict) else None
            info = next((t for t in structs if t.tag == kind), None)
            if info is None:  # unknown kind: any struct gives the tag field
                return structs[0]
        elif structs:
            info = structs[0]
        else:
            return info
    return info


def _literal_values(info: Any) -> list[str]:
    if isinstance(info, msgspec.inspect.LiteralType):
        return [str(v) for v in info.values]
    if isinstance(info, msgspec.inspect.UnionType):
        return [v for t in info.types for v in _literal_values(t)]
    if isinstance(info, msgspec.inspect.VarTupleType):
        return _literal_values(info.item_type)
    return []
