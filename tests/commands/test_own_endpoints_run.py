"""A suite's own workload, end to end, as a user meets it: from a folder outside the checkout,
three node stacks written by `new-stack` answer an inline JSON endpoint (a POST with a body
and a header, a field that differs from answer to answer ignored). The two that answer the same
document are measured, the lighter one named faster when the levels decide; the third answers
another document and is refused before its load, the message naming the field and both values."""

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from stackbench.store.store import Store
from tests.commands.cli_run import run_cli

pytestmark = pytest.mark.integration

# The same digest chain `ROUNDS` times: the answer is the same, the work per request is not.
SERVER = """\
"use strict";
const http = require("http");
const crypto = require("crypto");
const ROUNDS = __ROUNDS__;

function work() {
  let digest = "";
  for (let r = 0; r < ROUNDS; r++) {
    digest = "seed";
    for (let i = 0; i < 300; i++) digest = crypto.createHash("sha256").update(digest).digest("hex");
  }
  return digest;
}

http.createServer((req, res) => {
  if (req.url === "/hello") {
    res.writeHead(200, { "Content-Type": "text/plain" });
    res.end("Hello World");
    return;
  }
  if (req.url === "/items?id=7" && req.method === "POST"
      && req.headers["x-tenant"] === "acme") {
    let body = "";
    req.on("data", (chunk) => { body += chunk; });
    req.on("end", () => {
      const asked = JSON.parse(body);
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify(__DOCUMENT__));
    });
    return;
  }
  res.writeHead(404, { "Content-Type": "text/plain" });
  res.end("not found");
}).listen(Number(process.env.PORT), process.env.HOST);
"""
SAME = "{ now: Date.now(), id: 7, name: asked.name, total: 42, digest: work() }"
# another key order and whitespace count for nothing; another total is another document
REORDERED = "{ digest: work(), total: 42, name: asked.name, id: 7, now: -1 }"
ODD = "{ now: Date.now(), id: 7, name: asked.name, total: 43, digest: work() }"

SUITE = """\
stacks = ["./apps/light", "./apps/heavy", "./apps/odd"]
workloads = ["items"]

[endpoints.items]
path = "/items?id=7"
method = "POST"
body_file = "bodies/item.json"
headers = { content-type = "application/json", x-tenant = "acme" }
expect = { status = 200, same_across_stacks = true }
ignore = ["$.now"]

[load]
connections = [8]
duration_s = 10     # 2 s dropped, a 5-s steady window: room for a stolen second or two
warmup_s = 1
pause_s = 0
"""


def stackbench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli("--no-color", *args, cwd=cwd, env={"COLUMNS": "1000"})


@pytest.fixture
def open_folder():
    """A folder outside the checkout that the unprivileged stack user can read."""
    folder = Path(tempfile.mkdtemp(prefix="stackbench-endpoints-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def own_node_stack(folder: Path, name: str, rounds: int, document: str) -> None:
    made = stackbench("new-stack", f"apps/{name}", "--like", "node", cwd=folder)
    assert made.returncode == 0, made.stderr
    stack = folder / "apps" / name
    manifest = stack / "stack.toml"
    text = manifest.read_text()
    manifest.write_text(text.replace('workloads = ["hello"]', 'workloads = ["hello", "items"]'))
    script = SERVER.replace("__ROUNDS__", str(rounds)).replace("__DOCUMENT__", document)
    (stack / "server.js").write_text(script)


def test_an_inline_endpoint_is_compared_verified_and_measured(open_folder) -> None:
    folder = open_folder
    own_node_stack(folder, "light", 1, SAME)
    own_node_stack(folder, "heavy", 2, REORDERED)
    own_node_stack(folder, "odd", 1, ODD)
    (folder / "bodies").mkdir()
    (folder / "bodies" / "item.json").write_text('{"name": "widget"}\n')
    (folder / "ours.toml").write_text(SUITE)

    ran = stackbench("run", "ours.toml", "--out", str(folder / "results"), cwd=folder)
    output = ran.stdout + ran.stderr
    # a stack that fails its verification fails its cases: exit 4, the others measured
    assert ran.returncode == 4, output[-3000:]
    refusal = "answers a different document than light, heavy: $.total is 43 here, 42 on light"
    assert refusal in output

    store = Store(folder / "results" / "stackbench.sqlite")
    data = store.load_run(store.runs()[-1].id)
    store.close()
    verified = {v.stack: v.ok for v in data.verifications}
    assert verified == {"light": True, "heavy": True, "odd": False}
    cases = {c.stack: c for c in data.cases}
    assert cases["odd"].status == "failed" and refusal in cases["odd"].reason
    measured = {c.stack for c in data.cases if any(lv.case_id == c.id for lv in data.levels)}
    assert measured == {"light", "heavy"}  # odd was refused before any load
    for level in data.levels:
        # the loader sent the POST, its header and its body: the answers were 200s
        assert level.status != "failed" and level.ok > 0, level.errors
        assert not any(level.errors.values()), level.errors
        server = level.usage["server"]
        assert server.cpu_percent > 0 and server.rss_max_bytes > 0

    run_dir = folder / "results" / f"run-{data.run.id}"
    assert (run_dir / "report.html").is_file()
    document = json.loads((run_dir / "results.json").read_text())
    [ranking] = document["workloads"][0]["rankings"]
    best, other = ranking["entries"]
    verdict = other["vs_best"]["outcome"]
    disturbed = any(lv.flags for lv in data.levels if "disturbed" in str(lv.flags))
    unsteady = any(e["throughput"]["evidence"] is None for e in (best, other))
    if not disturbed and not unsteady and all(tight(e["throughput"]) for e in (best, other)):
        # two steady levels, each known to within 10%, decide a 1.6-2x ratio
        assert (best["stack"], other["stack"], verdict) == ("light", "heavy", "faster"), other
    elif verdict != "faster":  # a busy or slowed host decides nothing, and says why
        assert verdict == "not enough evidence", (best, other)
        assert other["vs_best"]["decide"], other
        assert disturbed or unsteady or not all(tight(e["throughput"]) for e in (best, other))
    else:  # a noisy level may still leave the gap clear of the threshold: the right way round
        assert (best["stack"], other["stack"]) == ("light", "heavy"), (best, other)


def tight(figure: dict[str, float]) -> bool:
    """A level's own interval within 10% of its figure on both sides: the host held still
    for its steady window (a host that slows the server at its own CPU for a few seconds
    leaves no flag, only a wide window: CI saw light's 8 seconds give 1.76x, 0.81-3.81)."""
    return figure["low"] >= 0.9 * figure["value"] and figure["high"] <= 1.1 * figure["value"]
