"""`expect.json_schema`, end to end, as a user meets it: from a folder outside the checkout,
two node stacks written by `new-stack` answer an inline JSON endpoint checked against a schema
file beside the suite. The stack whose body meets the schema is measured; the other is refused
before its load (exit 4), the message naming the stack, the field's JSON path and the schema's
complaint."""

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from stackbench.store.store import Store
from tests.commands.cli_run import run_cli

pytestmark = pytest.mark.integration

SERVER = """\
"use strict";
const http = require("http");
http.createServer((req, res) => {
  if (req.url === "/hello") { res.end("Hello World"); return; }
  res.writeHead(200, { "Content-Type": "application/json" });
  res.end(JSON.stringify(__DOCUMENT__));
}).listen(Number(process.env.PORT), process.env.HOST);
"""
SCHEMA = {
    "type": "object",
    "required": ["id", "total", "rows"],
    "properties": {
        "id": {"type": "integer"},
        "total": {"type": "integer", "minimum": 0},
        "rows": {"type": "array", "items": {"$ref": "#/$defs/row"}},
    },
    "$defs": {"row": {"type": "object", "required": ["sku"]}},
}
SUITE = """\
stacks = ["./apps/good", "./apps/bad"]
workloads = ["items"]

[endpoints.items]
path = "/items/7"
expect = { json_schema = "schemas/item.json" }

[load]
connections = [4]
duration_s = 2
warmup_s = 0
pause_s = 0
"""


@pytest.fixture
def open_folder():
    """A folder outside the checkout that the unprivileged stack user can read."""
    folder = Path(tempfile.mkdtemp(prefix="stackbench-schema-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def own_node_stack(folder: Path, name: str, document: str) -> None:
    made = run_cli("--no-color", "new-stack", f"apps/{name}", "--like", "node", cwd=folder)
    assert made.returncode == 0, made.stderr
    manifest = folder / "apps" / name / "stack.toml"
    text = manifest.read_text()
    manifest.write_text(text.replace('workloads = ["hello"]', 'workloads = ["hello", "items"]'))
    (folder / "apps" / name / "server.js").write_text(SERVER.replace("__DOCUMENT__", document))


def test_a_body_that_fails_the_schema_is_refused_before_load(open_folder) -> None:
    folder = open_folder
    own_node_stack(folder, "good", '{ id: 7, total: 42, rows: [{ sku: "a" }] }')
    own_node_stack(folder, "bad", '{ id: 7, total: 42, rows: [{ sku: "a" }, { qty: 1 }] }')
    (folder / "schemas").mkdir()
    (folder / "schemas" / "item.json").write_text(json.dumps(SCHEMA))
    (folder / "ours.toml").write_text(SUITE)

    ran = run_cli(
        "--no-color",
        "run",
        "ours.toml",
        "--out",
        str(folder / "results"),
        "--no-calibrate",
        cwd=folder,
        env={"COLUMNS": "1000"},
    )
    output = ran.stdout + ran.stderr
    assert ran.returncode == 4, output[-3000:]  # a stack failed its verification
    refusal = (
        "GET /items/7: the body does not meet schemas/item.json: at $.rows[1]: "
        "'sku' is a required property"
    )
    assert f"bad: failed — verification failed: {refusal}" in output, output[-3000:]

    store = Store(folder / "results" / "stackbench.sqlite")
    data = store.load_run(store.runs()[-1].id)
    store.close()
    assert {v.stack: v.ok for v in data.verifications} == {"good": True, "bad": False}
    measured = {c.stack for c in data.cases if any(lv.case_id == c.id for lv in data.levels)}
    assert measured == {"good"}
    assert data.levels
    for level in data.levels:
        # the body was the same twice running: every answer under load was held to its hash
        assert level.ok > 0 and not any(level.errors.values()), level.errors
