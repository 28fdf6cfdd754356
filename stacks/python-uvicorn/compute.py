"""The compute workloads of docs/contracts.md section 1, as plain functions: the ASGI app
(app.py) serves them over HTTP and script.py times them without HTTP. Nothing is cached
between calls: every loop runs, every file is opened and read, every hash computed."""

import hashlib
import os
from collections.abc import Callable, Mapping

FIXTURES_DIR = os.environ.get("FIXTURES_DIR", "")


class BadParameter(ValueError):
    """A query parameter that is not a decimal integer in its range: status 400."""


def int_param(query: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    text = query.get(name)
    if text is None:
        return default
    if not text.isascii() or not text.isdigit() or len(text) > 10:
        raise BadParameter(f"{name} must be a decimal integer")
    value = int(text)
    if not low <= value <= high:
        raise BadParameter(f"{name} must be in {low}..{high}")
    return value


def hello(query: Mapping[str, str]) -> str:
    return "Hello World"


def concat(query: Mapping[str, str]) -> str:
    n = int_param(query, "n", 1000, 0, 10_000_000)
    s = ""
    for _ in range(n):
        s += "s"  # CPython appends in place when it holds the only reference
    return s


def add(query: Mapping[str, str]) -> str:
    n = int_param(query, "n", 1000, 0, 100_000_000)
    counter = 0
    for _ in range(n):
        counter += 1
    return str(counter)


def array(query: Mapping[str, str]) -> str:
    n = int_param(query, "n", 1000, 0, 10_000_000)
    items: list[str] = []
    for _ in range(n):
        items.append("s")
    return str(len(items))


def assoc(query: Mapping[str, str]) -> str:
    n = int_param(query, "n", 1000, 0, 10_000_000)
    table: dict[str, str] = {}
    for i in range(n):
        table["s" + str(i)] = "s"
    return str(len(table))


def readfile(query: Mapping[str, str]) -> str:
    n = int_param(query, "n", 100, 0, 100_000)
    path = os.path.join(FIXTURES_DIR, "demo.txt")
    total = 0
    for _ in range(n):
        with open(path, "rb") as f:  # Python's blocking file API, as the contract asks
            total += len(f.read())
    return str(total)


def sha256(query: Mapping[str, str]) -> str:
    n = int_param(query, "n", 1, 1, 100_000)
    with open(os.path.join(FIXTURES_DIR, "random-64k.bin"), "rb") as f:
        data = f.read()  # read from disk once per request, never cached across requests
    digest = hashlib.sha256(data).digest()
    for _ in range(1, n):
        digest = hashlib.sha256(digest + data).digest()
    return digest.hex()


def plaintext(query: Mapping[str, str]) -> str:
    return "Hello, World!"


def data(n: int) -> str:
    return "." * n


TEXT_WORKLOADS: dict[str, Callable[[Mapping[str, str]], str]] = {
    "hello": hello,
    "concat": concat,
    "add": add,
    "array": array,
    "assoc": assoc,
    "readfile": readfile,
    "sha256": sha256,
    "plaintext": plaintext,
}
