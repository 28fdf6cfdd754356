"""A manifest's extra loopback `ports` and its alternative processes (`when`): the variables,
the environment, which processes start, and readiness on "HOST:PORT" (docs/contracts.md 2).

The starts use the fake `refserver` stack with a side process added, so they take a second.
"""

import dataclasses
import socket
from pathlib import Path

import pytest
from msgspec import structs

from stackbench.config.manifest import EnumParam, Param, Process, Ready
from stackbench.config.placement import default_placement
from stackbench.config.status import Availability, StackEntry, StackStatus
from stackbench.errors import InputError, StackError
from stackbench.lab import fs
from stackbench.lab.httpget import get
from stackbench.lab.inventory import load_inventory
from stackbench.lab.procs import free_ports
from stackbench.lab.stack import (
    StackConfig,
    StackInstance,
    environment_for,
    tcp_address,
    variables_for,
)
from stackbench.lab.templating import render, syntax_for

PYTHON = "{{cmd.python}}"
# Side processes for the fake stack: one on the extra TCP port, one on a unix socket.
SIDE_TCP = Process(
    role="side",
    when={"mode": ("tcp",)},
    command=(PYTHON, "-m", "http.server", "--bind", "127.0.0.1", "{{side_port}}"),
    ready_tcp="127.0.0.1:{{side_port}}",
)
SIDE_UNIX = Process(
    role="side",
    when={"mode": ("unix",)},
    command=(
        PYTHON,
        "-c",
        "import os, socket, time; s = socket.socket("
        "socket.AF_UNIX); s.bind(os.environ['RUN_DIR'] + '/side.sock'); "
        "s.listen(); time.sleep(600)",
    ),
    ready_unix="{{run_dir}}/side.sock",
)
MODE = Param("mode", EnumParam(default="tcp", values=("tcp", "unix", "none")))


@pytest.fixture
def scratch() -> Path:
    made = fs.private_temp_dir("sb-test-ports-")
    yield made
    fs.remove_temp_dir(made)


def with_side(refserver: StackEntry, *side: Process, ready: Ready | None = None) -> StackEntry:
    """The refserver stack with `side` started before its server and an extra port."""
    m = refserver.manifest
    changed = dataclasses.replace(
        m,
        ports=("side_port",),
        params=(*m.params, MODE),
        processes=(*side, *m.processes),
        ready=ready or m.ready,
    )
    return StackEntry(changed, refserver.status)


def config(entry: StackEntry, run_dir: Path, mode: str) -> StackConfig:
    return StackConfig(
        entry.manifest,
        entry.status,
        run_dir,
        default_placement().server,
        {"mode": mode},
        {},
        run_root=run_dir.parent,
    )


@pytest.mark.parametrize(
    "text, host, port",
    [
        ("8080", "10.0.0.5", 8080),
        ("127.0.0.1:9001", "127.0.0.1", 9001),
        ("[::1]:65535", "::1", 65535),
    ],
)
def test_tcp_address_is_a_port_on_the_stack_host_or_an_ip_and_a_port(text, host, port):
    assert tcp_address(text, "10.0.0.5", "m [[process]] x key 'ready_tcp'") == (host, port)


@pytest.mark.parametrize(
    "text",
    ["", "0", "65536", "x", "²", "localhost:80", "1.2.3:80", "127.0.0.1:", "127.0.0.1:-1", ":80"],
)
def test_a_ready_tcp_that_is_not_an_address_names_the_key(text):
    with pytest.raises(InputError, match=r"m key 'ready_tcp': .* is not a port \(1\.\.65535\)"):
        tcp_address(text, "127.0.0.1", "m key 'ready_tcp'")


def test_free_ports_are_distinct_free_and_never_an_excluded_one():
    first = free_ports(1)[0]
    ports = free_ports(5, exclude={first})
    assert len(set(ports)) == 5 and first not in ports
    for port in ports:  # free: each can be bound right away
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", port))
    assert free_ports(0) == []


def test_extra_ports_are_variables_and_environment_next_to_the_params():
    entry = load_inventory()["node-nginx"]
    m = entry.manifest
    status = StackStatus(
        "node-nginx",
        Availability.AVAILABLE,
        commands={r.name: f"/usr/bin/{r.name}" for r in m.requires},
    )
    cfg = StackConfig(
        m, status, Path("/tmp/run-1/node-nginx"), frozenset({0}), {"upstream": "tcp"}, {}
    )
    variables = variables_for(cfg, 8080, {"node_port": 9001})
    assert variables["port"] == "8080" and variables["node_port"] == "9001"
    env = environment_for(variables, cfg)
    assert env["NODE_PORT"] == "9001" and env["PORT"] == "8080" and env["UPSTREAM"] == "tcp"


def _rendered(
    stack: str, run_dir: Path, params: dict[str, str], ports: dict[str, int]
) -> dict[str, str]:
    """Every template of a shipped stack rendered with these parameters and extra ports (the
    stack on port 8080, its commands as if installed), by destination file name."""
    m = load_inventory()[stack].manifest
    status = StackStatus(
        stack,
        Availability.AVAILABLE,
        commands={r.name: f"/usr/bin/{r.name}" for r in m.requires},
    )
    cfg = StackConfig(m, status, run_dir, frozenset({0}), params, {})
    variables = variables_for(cfg, 8080, ports)
    return {
        t.dest: render((m.stack_dir / t.src).read_text(), variables, t.src, syntax_for(t.dest))
        for t in m.templates
    }


@pytest.mark.parametrize(
    "upstream, server",
    [
        ("tcp", "server 127.0.0.1:9001;"),
        ("unix", "server unix:/tmp/run-1/node-nginx/node.sock;"),
    ],
)
def test_node_nginx_configs_include_the_upstream_the_parameter_names(upstream, server):
    """Both nginx configurations (keep-alive and plain) take their upstream server from the
    file the `upstream` parameter names; that file holds Node's port or socket."""
    run_dir = Path("/tmp/run-1/node-nginx")
    rendered = _rendered("node-nginx", run_dir, {"upstream": upstream}, {"node_port": 9001})
    include = f"include {run_dir}/nginx-upstream-{upstream}.conf;"
    for conf in ("nginx.conf", "nginx-plain.conf"):
        assert (
            include in rendered[conf]
            and "server " not in rendered[conf].split("upstream node {")[1].split("}")[0]
        ), conf
    assert server in rendered[f"nginx-upstream-{upstream}.conf"]


@pytest.mark.parametrize(
    "fastcgi, server",
    [
        ("tcp", "server 127.0.0.1:9002;"),
        ("unix", "server unix:/tmp/run-1/php-fpm-nginx/php-fpm.sock;"),
    ],
)
def test_php_fpm_nginx_config_includes_the_fastcgi_server_the_parameter_names(fastcgi, server):
    run_dir = Path("/tmp/run-1/php-fpm-nginx")
    rendered = _rendered("php-fpm-nginx", run_dir, {"fastcgi": fastcgi}, {"fpm_port": 9002})
    upstream = rendered["nginx.conf"].split("upstream php_fpm {")[1].split("}")[0]
    assert f"include {run_dir}/nginx-fastcgi-{fastcgi}.conf;" in upstream
    assert "server " not in upstream
    assert server in rendered[f"nginx-fastcgi-{fastcgi}.conf"]


@pytest.mark.integration
@pytest.mark.concurrent
def test_the_side_process_the_parameter_picks_starts_on_its_extra_port(fake_inventory, scratch):
    entry = with_side(fake_inventory["refserver"], SIDE_TCP, SIDE_UNIX)
    with StackInstance(config(entry, scratch / "tcp", "tcp")) as stack:
        side_port = stack.extra_ports["side_port"]
        assert side_port != stack.port and stack.variables["side_port"] == str(side_port)
        assert [p.role for p in stack.chosen_processes()] == ["side", "server"]
        stack.start()
        assert sorted(stack.roles()) == ["server", "side"]
        assert get(f"http://127.0.0.1:{side_port}", "/").status == 200  # http.server
        assert get(stack.base_url, "/hello").body == b"Hello World"
        assert not (scratch / "tcp" / "side.sock").exists()
    with StackInstance(config(entry, scratch / "unix", "unix")) as stack:
        stack.start()
        assert (scratch / "unix" / "side.sock").is_socket()
        with pytest.raises(OSError):
            get(f"http://127.0.0.1:{stack.extra_ports['side_port']}", "/", timeout_s=1)


def test_parameters_that_select_no_process_are_an_error_naming_the_manifest(
    fake_inventory, scratch
):
    refserver = fake_inventory["refserver"]
    only_side = dataclasses.replace(with_side(refserver, SIDE_TCP).manifest, processes=(SIDE_TCP,))
    stack = StackInstance(config(StackEntry(only_side, refserver.status), scratch / "r", "none"))
    with (
        stack,
        pytest.raises(
            InputError,
            match=r"stack.toml: no \[\[process\]\] starts with "
            r"the parameters .*'mode': 'none'",
        ),
    ):
        stack.start()
    assert not (scratch / "r").exists()  # refused before the run dir is made


@pytest.mark.integration
@pytest.mark.concurrent
def test_a_side_process_that_never_listens_fails_naming_address_and_port(fake_inventory, scratch):
    silent = structs.replace(SIDE_TCP, command=(PYTHON, "-c", "import time; time.sleep(60)"))
    entry = with_side(fake_inventory["refserver"], silent, ready=Ready("/hello", 1.0))
    with StackInstance(config(entry, scratch / "s", "tcp")) as stack:
        port = stack.extra_ports["side_port"]
        with pytest.raises(
            StackError,
            match=rf"side did not listen on 127\.0\.0\.1 port "
            rf"{port} in time",
        ):
            stack.start()
