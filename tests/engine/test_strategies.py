"""The strategies with a fake measurement: which levels they ask for and the note they give."""

from stackbench.config.plan import Level
from stackbench.config.suite import RateSearch, Slo
from stackbench.engine.strategies import fixed_sweep, rate_search
from stackbench.store.records import LevelRecord
from tests.measured import open_loop


def record(level: Level, p99_us: float, sustained: bool = True) -> LevelRecord:
    return LevelRecord(
        case_id=1,
        level_index=level.index,
        level_value=level.value,
        repetition=level.repetition,
        driver="native",
        mode="closed",
        keepalive="on",
        started_at=0.0,
        duration_s=1.0,
        completed=100,
        ok=100,
        errors={},
        requests_per_s=100.0,
        latency_us={"p99": p99_us},
        open_loop=open_loop(level.value, sustained),
        usage={},
        status="ok",
        command="",
    )


def sweep(values: list[float], repeat: int = 1) -> list[Level]:
    return [Level(i, v, rep) for i, v in enumerate(values) for rep in range(repeat)]


class Fake:
    """Latency grows with the level: p99 = level value in ms."""

    def __init__(self, capacity: float = 0.0) -> None:
        self.asked: list[Level] = []
        self.capacity = capacity

    def __call__(self, level: Level) -> LevelRecord:
        self.asked.append(level)
        return record(level, level.value * 1000, sustained=level.value <= self.capacity)


def slo(stop_after: int, latency_ms: float = 3.0) -> Slo:
    return Slo(
        percentile=99, latency_ms=latency_ms, max_error_rate=0.01, stop_after_failures=stop_after
    )


def test_without_an_slo_every_level_and_repetition_runs_in_order():
    fake = Fake()
    assert fixed_sweep(sweep([1, 2, 3], repeat=2), None, fake) == ""
    assert [(lv.index, lv.repetition) for lv in fake.asked] == [
        (0, 0),
        (0, 1),
        (1, 0),
        (1, 1),
        (2, 0),
        (2, 1),
    ]


def test_the_sweep_stops_after_k_consecutive_failed_levels():
    fake = Fake()  # levels 4 and 5 ms fail a 3 ms objective
    note = fixed_sweep(sweep([1, 2, 4, 5, 6, 7]), slo(2), fake)
    assert [lv.value for lv in fake.asked] == [1, 2, 4, 5]
    assert note == (
        "sweep stopped early: SLO failed at 2 consecutive levels (stop_after_failures = 2)"
    )


def test_a_pass_in_between_resets_the_count_and_the_last_level_is_no_early_stop():
    fake = Fake()
    levels = sweep([4, 1, 4, 5])  # fail, pass, fail, fail (the last level)
    assert fixed_sweep(levels, slo(2), fake) == ""
    assert len(fake.asked) == 4
    assert fixed_sweep(sweep([9, 9, 9]), slo(0), Fake()) == ""  # 0: never stop


def test_the_sweep_judges_a_level_on_its_median_repetition():
    p99_ms = iter([2.0, 4.0, 4.0, 4.0, 2.0, 2.0])  # level medians: 4 ms (fails), 2 ms
    asked: list[Level] = []

    def measure(level: Level) -> LevelRecord:
        asked.append(level)
        return record(level, next(p99_ms) * 1000)

    note = fixed_sweep(sweep([1, 2, 3], repeat=3), slo(1), measure)
    assert note.startswith("sweep stopped early: SLO failed at 1 consecutive levels")
    assert len(asked) == 3  # all three repetitions of the first level, then the stop


def test_the_search_brackets_the_capacity_within_its_budget():
    fake = Fake(capacity=3000)
    search = RateSearch(lo=1000, hi=8000, probes=8, tolerance=0.05)
    note = rate_search(search, slo(0, latency_ms=1e9), 1, fake)
    # doubling from lo until a failure, then bisecting [2000, 4000] until the bracket is
    # within 5% of the best rate: 3125 - 3000 = 125 <= 150
    assert [lv.value for lv in fake.asked] == [1000, 2000, 4000, 3000, 3500, 3250, 3125]
    assert [lv.index for lv in fake.asked] == list(range(7))
    assert note == "max sustainable rate: 3000 req/s met the SLO, 3125 req/s did not (7 probes)"


def test_the_search_stops_when_its_probe_budget_is_spent():
    fake = Fake(capacity=3000)
    note = rate_search(
        RateSearch(lo=1000, hi=8000, probes=4, tolerance=0.05), slo(0, latency_ms=1e9), 1, fake
    )
    assert [lv.value for lv in fake.asked] == [1000, 2000, 4000, 3000]
    assert note == "max sustainable rate: 3000 req/s met the SLO, 4000 req/s did not (4 probes)"


def test_the_search_reports_when_even_the_lowest_rate_fails():
    fake = Fake(capacity=10)
    note = rate_search(RateSearch(lo=20, hi=100), slo(0, latency_ms=1e9), 2, fake)
    assert [(lv.value, lv.repetition) for lv in fake.asked] == [(20, 0), (20, 1)]
    assert note == "max sustainable rate: below 20 req/s (the lowest probe broke the SLO)"
