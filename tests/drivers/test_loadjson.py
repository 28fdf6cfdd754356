"""The loader's `--json` document: the typed structure (drivers/loadjson.py) and the published
schema (loadgen/schema/) agree, and a real document validates against one and decodes into the
other."""

import json
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import msgspec.inspect as mi
import pytest
from conftest import native_loader_built

from stackbench.config.loadspec import LoadRequest, LoadSettings
from stackbench.config.paths import REPO_ROOT, loadgen_binary
from stackbench.drivers import loadjson
from stackbench.drivers.native import NativeDriver
from stackbench.errors import DriverError

SCHEMA = json.loads((REPO_ROOT / "loadgen" / "schema" / "stackbench-load.schema.json").read_text())
JSON_TYPES = {
    mi.IntType: {"integer"},
    mi.FloatType: {"number", "integer"},
    mi.StrType: {"string"},
    mi.BoolType: {"boolean"},
    mi.LiteralType: {"string"},
    mi.StructType: {"object"},
    mi.DictType: {"object"},
    mi.VarTupleType: {"array"},
}


def schema_types(node: dict[str, Any]) -> set[str]:
    """The JSON types a schema node admits."""
    if "oneOf" in node:
        return set().union(*(schema_types(n) for n in node["oneOf"]))
    if "type" in node:
        return set(node["type"]) if isinstance(node["type"], list) else {node["type"]}
    values = node.get("enum", [node["const"]] if "const" in node else [])
    names = {bool: "boolean", int: "integer", float: "number", str: "string"}
    return {names[type(v)] for v in values}


def object_node(node: dict[str, Any]) -> dict[str, Any]:
    return next((n for n in node.get("oneOf", [node]) if "properties" in n), node)


def check_agrees(info: mi.Type, node: dict[str, Any], where: str) -> None:
    """Every value the struct accepts the schema promises, with the same nullability."""
    allowed = schema_types(node)
    if isinstance(info, mi.UnionType):
        assert "null" in allowed, f"{where}: the struct accepts null, the schema does not"
        (info,) = [t for t in info.types if not isinstance(t, mi.NoneType)]
    else:
        assert "null" not in allowed, f"{where}: the schema allows null, the struct does not"
    assert JSON_TYPES[type(info)] & allowed, f"{where}: struct {info}, schema {allowed}"
    if isinstance(info, mi.LiteralType):
        assert set(info.values) == set(node.get("enum", [node.get("const")])), where
    elif isinstance(info, mi.VarTupleType):
        check_agrees(info.item_type, node["items"], f"{where}[]")
    elif isinstance(info, mi.DictType):
        for name, prop in object_node(node).get("properties", {}).items():
            check_agrees(info.value_type, prop, f"{where}.{name}")
    elif isinstance(info, mi.StructType):
        obj = object_node(node)
        required = set(obj.get("required", []))
        for field in info.fields:
            assert field.name in obj["properties"], f"{where}.{field.name}: not in the schema"
            if field.required:
                assert field.name in required, f"{where}.{field.name}: the schema may omit it"
            check_agrees(field.type, obj["properties"][field.name], f"{where}.{field.name}")


def test_every_field_of_the_struct_is_promised_by_the_schema():
    check_agrees(mi.type_info(loadjson.LoadDocument), SCHEMA, "document")


def test_the_checker_itself_catches_a_disagreement():
    class Wrong(msgspec.Struct):
        duration_s: str  # the schema says number

    with pytest.raises(AssertionError, match="duration_s"):
        check_agrees(mi.type_info(Wrong), SCHEMA, "document")

    class Missing(msgspec.Struct):
        queue: int

    with pytest.raises(AssertionError, match="queue: not in the schema"):
        check_agrees(mi.type_info(Missing), SCHEMA, "document")


# --- a real document --------------------------------------------------------------------------
class Hello(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive with Content-Length

    def do_GET(self) -> None:
        body = b"Hello World"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def hello_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hello"
    server.shutdown()
    server.server_close()


needs_loader = pytest.mark.skipif(not native_loader_built(), reason="loadgen not built")


def loader_output(*args: str) -> str:
    done = subprocess.run(
        [str(loadgen_binary()), "--json", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@needs_loader
@pytest.mark.parametrize(
    "args",
    [("-n", "300", "-c", "4", "-t", "1"), ("-R", "200", "-d", "1s", "-c", "4", "--no-keepalive")],
    ids=["closed", "open"],
)
def test_a_real_document_validates_and_decodes(hello_url: str, args: tuple[str, ...]) -> None:
    text = loader_output(*args, "--expect-body", "Hello World", hello_url)
    raw = json.loads(text)
    jsonschema.validate(raw, SCHEMA)
    doc = loadjson.decode(text)
    assert msgspec.to_builtins(doc.requests) == raw["requests"]
    assert doc.config.mode == raw["config"]["mode"] and doc.requests.completed > 0
    assert (doc.open_loop is None) == (raw["open_loop"] is None)
    assert len(doc.timeseries) == len(raw["timeseries"])
    assert doc.latency_us.figures()["p99"] == raw["latency_us"]["p99"]

    req = LoadRequest(hello_url, LoadSettings(), 4, None, frozenset({0}))
    result = NativeDriver().parse(req, ["stackbench-load"], text, "", 1.0, (0.0, 0.0))
    assert result.completed == raw["requests"]["completed"] and result.errors_total == 0
    assert {"p50", "p99", "p99_99", "p80"} <= set(result.latency_us)


@needs_loader
def test_an_extended_document_still_decodes(hello_url: str) -> None:
    """An additive schema revision (new fields, a new schema number) does not break us."""
    raw = json.loads(loader_output("-n", "50", "-c", "1", hello_url))
    raw["schema"] = "stackbench-load/2"
    raw["per_second_histograms"] = [{"t_s": 1, "data": "HISTFAAA"}]
    raw["timeseries"] = [{**second, "p999_us": 7} for second in raw["timeseries"]]
    raw["errors"]["backoff"] = 0
    doc = loadjson.decode(json.dumps(raw))
    assert doc.schema == "stackbench-load/2" and doc.errors["backoff"] == 0


def test_a_broken_document_names_the_field() -> None:
    with pytest.raises(DriverError, match=r"requests.*rebuild the loader"):
        loadjson.decode(json.dumps({"schema": "stackbench-load/1", "requests": {}}))
    with pytest.raises(DriverError, match="printed no JSON document.*stderr: boom"):
        loadjson.decode("thread panicked", "boom")


def test_another_tool_document_is_refused() -> None:
    valid = json.loads((Path(__file__).parent / "data" / "loader-closed.json").read_text())
    valid["schema"] = "other-tool/1"
    with pytest.raises(DriverError, match="schema 'other-tool/1'"):
        loadjson.decode(json.dumps(valid))
