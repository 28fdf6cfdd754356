"""Deterministic seed data for the data workloads, as Python rows and as SQL.

The same code produces the rows the verifiers compare against and the committed
workloads/sql/seed.sql, so the two cannot drift (a test regenerates and compares).
Regenerate with: python -m stackbench.services seed --write

Random-looking values come from SplitMix64 with fixed seeds rather than Python's
`random`, so the data is defined by this file alone (any language could reproduce it).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

DATABASE = "stackbench"
REPORT_TABLES = ("a", "b")
REPORT_ROWS = 300
WORLD_ROWS = 10_000
CACHE_KEY = "test"
CACHE_VALUE = "test"
TEST_ROW_NAME = "test"
SEED_SQL_PATH = Path(__file__).resolve().parents[2] / "workloads" / "sql" / "seed.sql"
INSERT_BATCH = 1000

_TABLE_SEEDS = {"a": 0xA, "b": 0xB, "World": 0x5EED}
_CREATED_EPOCH = dt.datetime(2020, 1, 1)
_SECONDS_PER_YEAR = 365 * 24 * 3600
_ADJECTIVES = ("amber", "brisk", "calm", "dusty", "eager", "frosty", "gentle", "hollow")
_NOUNS = ("anchor", "bridge", "candle", "delta", "ember", "falcon", "harbor", "island")
# Some names need HTML escaping, so /db-report proves each stack escapes its cells.
_ESCAPE_NAMES = ("Smith & Sons <ltd>", 'the "quoted" one', "O'Brien & Co", "a<b>c</b>")
_ESCAPE_EVERY = 37

# TechEmpower's Fortune table, texts exactly as published (ids 1..12).
FORTUNES: tuple[tuple[int, str], ...] = (
    (1, "fortune: No such file or directory"),
    (2, "A computer scientist is someone who fixes things that aren't broken."),
    (3, "After enough decimal places, nobody gives a damn."),
    (4, "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1"),
    (5, "A computer program does what you tell it to do, not what you want it to do."),
    (6, "Emacs is a nice operating system, but I prefer UNIX. \u2014 Tom Christaensen"),
    (7, "Any program that runs right is obsolete."),
    (8, "A list is only as strong as its weakest link. \u2014 Donald Knuth"),
    (9, "Feature: A bug with seniority."),
    (10, "Computers make very fast, very accurate mistakes."),
    (11, '<script>alert("This should not be displayed in a browser alert box.");</script>'),
    (12, "\u30d5\u30ec\u30fc\u30e0\u30ef\u30fc\u30af\u306e\u30d9\u30f3\u30c1\u30de\u30fc\u30af"),
)
ADDITIONAL_FORTUNE = (0, "Additional fortune added at request time.")


@dataclass(frozen=True)
class ReportRow:
    id: int
    name: str
    value: int
    created: dt.datetime

    def cells(self) -> tuple[str, str, str, str]:
        """The row as /db-report renders it (before HTML escaping)."""
        created = self.created.strftime("%Y-%m-%d %H:%M:%S")
        return (str(self.id), self.name, str(self.value), created)


class SplitMix64:
    """Tiny, well-known PRNG (Steele et al. 2014): fixed seed, fixed sequence."""

    _MASK = (1 << 64) - 1

    def __init__(self, seed: int) -> None:
        self._state = seed & self._MASK

    def next_u64(self) -> int:
        self._state = (self._state + 0x9E3779B97F4A7C15) & self._MASK
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self._MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self._MASK
        return z ^ (z >> 31)

    def below(self, bound: int) -> int:
        """0 <= n < bound; the modulo bias is irrelevant for seed data."""
        return self.next_u64() % bound


def report_rows(table: str) -> tuple[ReportRow, ...]:
    rng = SplitMix64(_TABLE_SEEDS[table])
    return tuple(_report_row(row_id, rng) for row_id in range(1, REPORT_ROWS + 1))


def _report_row(row_id: int, rng: SplitMix64) -> ReportRow:
    adjective = _ADJECTIVES[rng.below(len(_ADJECTIVES))]
    noun = _NOUNS[rng.below(len(_NOUNS))]
    name = f"{adjective} {noun} {rng.below(1000)}"
    if row_id % _ESCAPE_EVERY == 0:
        name = _ESCAPE_NAMES[(row_id // _ESCAPE_EVERY) % len(_ESCAPE_NAMES)]
    value = rng.below(1_000_000)
    created = _CREATED_EPOCH + dt.timedelta(seconds=rng.below(_SECONDS_PER_YEAR))
    return ReportRow(row_id, name, value, created)


def world_rows() -> tuple[tuple[int, int], ...]:
    """(id, randomNumber) for ids 1..10000, randomNumber in 1..10000."""
    rng = SplitMix64(_TABLE_SEEDS["World"])
    return tuple((row_id, rng.below(10_000) + 1) for row_id in range(1, WORLD_ROWS + 1))


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def _batched_insert(table: str, columns: str, values: list[str]) -> Iterator[str]:
    for start in range(0, len(values), INSERT_BATCH):
        batch = ",\n".join(values[start : start + INSERT_BATCH])
        yield f"INSERT INTO `{table}` ({columns}) VALUES\n{batch}"


def _report_table_statements(table: str) -> Iterator[str]:
    yield f"DROP TABLE IF EXISTS `{table}`"
    yield (
        f"CREATE TABLE `{table}` (\n  id INT NOT NULL PRIMARY KEY,\n  name VARCHAR(64) NOT NULL,\n"
        "  value INT NOT NULL,\n  created DATETIME NOT NULL\n) ENGINE=InnoDB"
    )
    values = [
        f"({r.id}, {_sql_string(r.name)}, {r.value}, '{r.cells()[3]}')" for r in report_rows(table)
    ]
    yield from _batched_insert(table, "id, name, value, created", values)


def world_statements() -> Iterator[str]:
    """Also used on its own to restore World after /updates changed it."""
    yield "DROP TABLE IF EXISTS `World`"
    yield (
        "CREATE TABLE `World` (\n  id INT NOT NULL PRIMARY KEY,\n"
        "  randomNumber INT NOT NULL DEFAULT 0\n) ENGINE=InnoDB"
    )
    values = [f"({row_id}, {number})" for row_id, number in world_rows()]
    yield from _batched_insert("World", "id, randomNumber", values)


def _fortune_statements() -> Iterator[str]:
    yield "DROP TABLE IF EXISTS `Fortune`"
    yield (
        "CREATE TABLE `Fortune` (\n  id INT NOT NULL PRIMARY KEY,\n"
        "  message VARCHAR(2048) NOT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
    )
    values = [f"({fortune_id}, {_sql_string(message)})" for fortune_id, message in FORTUNES]
    yield from _batched_insert("Fortune", "id, message", values)


def _test_table_statements() -> Iterator[str]:
    yield "DROP TABLE IF EXISTS `test`"
    yield "CREATE TABLE `test` (\n  name VARCHAR(64) NOT NULL\n) ENGINE=InnoDB"
    yield f"INSERT INTO `test` (name) VALUES ({_sql_string(TEST_ROW_NAME)})"


def table_statements() -> list[str]:
    """Every statement creating and filling the tables (database already selected)."""
    statements: list[str] = []
    for table in REPORT_TABLES:
        statements += _report_table_statements(table)
    statements += _test_table_statements()
    statements += world_statements()
    statements += _fortune_statements()
    return statements


def database_statements() -> list[str]:
    return [
        f"CREATE DATABASE IF NOT EXISTS `{DATABASE}` CHARACTER SET utf8mb4",
        f"USE `{DATABASE}`",
    ]


def seed_sql() -> str:
    header = (
        "-- stackbench seed data. GENERATED by stackbench/services/seed.py; do not edit.\n"
        "-- Regenerate: python -m stackbench.services seed --write\n"
        "SET NAMES utf8mb4;\n"
    )
    body = ";\n\n".join(database_statements() + table_statements())
    return f"{header}{body};\n"


def write_seed_sql(path: Path = SEED_SQL_PATH) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(seed_sql(), encoding="utf-8")
    return path
