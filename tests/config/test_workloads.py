import hashlib

import pytest

from stackbench.config.paths import FIXTURES_DIR
from stackbench.config.workloads import CATALOG, parse_spec, sha256_chain
from stackbench.errors import InputError
from workloads.make_fixtures import demo_text, random_64k


def test_fixtures_are_what_the_generator_makes():
    assert (FIXTURES_DIR / "random-64k.bin").read_bytes() == random_64k()
    assert (FIXTURES_DIR / "demo.txt").read_bytes() == demo_text()
    assert len(random_64k()) == 65536


def test_sha256_chain_by_hand():
    data = random_64k()
    d1 = hashlib.sha256(data).digest()
    d2 = hashlib.sha256(d1 + data).digest()
    assert sha256_chain(1) == d1.hex().encode()
    assert sha256_chain(2) == d2.hex().encode()


@pytest.mark.parametrize(
    "text, label, path",
    [
        ("hello", "hello", "/hello"),
        ("sha256", "sha256?n=1", "/sha256?n=1"),
        ("sha256?n=1000", "sha256?n=1000", "/sha256?n=1000"),
        ("data?n=128", "data?n=128", "/data/128"),
        ("data/64", "data?n=64", "/data/64"),
        ("queries?queries=20", "queries?queries=20", "/queries?queries=20"),
    ],
)
def test_parse_spec(text, label, path):
    spec = parse_spec(text, "suite.toml")
    assert spec.label == label and spec.path == path


@pytest.mark.parametrize(
    "text, message",
    [
        ("nope", "unknown workload 'nope'"),
        ("hello?n=3", "takes no parameters"),
        ("sha256?x=3", "has no parameter 'x'"),
        ("sha256?n=abc", "not a whole number"),
        ("sha256?n=0", r"outside 1..100000"),
    ],
)
def test_bad_specs(text, message):
    with pytest.raises(InputError, match=message):
        parse_spec(text, "suite.toml")


def test_expected_bodies():
    assert CATALOG["concat"].expected(3) == b"sss"
    assert CATALOG["readfile"].expected(2) == b"16384"
    assert CATALOG["data"].expected(4) == b"...."
