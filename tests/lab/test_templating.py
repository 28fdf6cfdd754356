from pathlib import Path

import pytest

from stackbench.config.manifest import parse_manifest
from stackbench.errors import InputError
from stackbench.lab.templating import Syntax, names_in, render, resolve_params, syntax_for


def test_render_replaces_double_brace_names_only():
    text = "server { listen {{host}}:{{ port }}; } ${HOME} {single}"
    out = render(text, {"host": "127.0.0.1", "port": "8080"}, "nginx.conf")
    assert out == "server { listen 127.0.0.1:8080; } ${HOME} {single}"


def test_dotted_names():
    assert (
        render("{{cmd.php-fpm}} -F", {"cmd.php-fpm": "/usr/sbin/php-fpm8.2"}, "x")
        == "/usr/sbin/php-fpm8.2 -F"
    )


def test_unknown_name_names_the_file():
    with pytest.raises(InputError, match=r"nginx.conf.in: unknown template variable \{\{prot\}\}"):
        render("listen {{prot}};", {"port": "1"}, "nginx.conf.in")


def test_names_in():
    assert names_in("{{a}} {{ b.c }} {d}") == {"a", "b.c"}


@pytest.mark.parametrize(
    "name, syntax",
    [
        ("stackbench.ini", Syntax.INI),
        ("php.ini.in", Syntax.INI),
        ("php-fpm.conf", Syntax.INI),
        ("nginx.conf", Syntax.NGINX),
        ("apache2.conf", Syntax.APACHE),
        ("httpd.conf", Syntax.APACHE),
        ("redis.conf", Syntax.PLAIN),
    ],
)
def test_syntax_from_the_file_name(name, syntax):
    assert syntax_for(name) is syntax


@pytest.mark.parametrize("syntax", list(Syntax))
@pytest.mark.parametrize(
    "value",
    [
        "1\nauto_prepend_file=/tmp/x",
        "a\rb",
        "tab\there",
        "\x1b[2J",
        "nul\x00",
        "del\x7f",
        "next\x85line",
        "sep\u2028x",
    ],
)
def test_no_control_character_reaches_any_file_or_command_line(syntax, value):
    with pytest.raises(
        InputError,
        match=r"php.ini.in: cannot write \{\{v\}\} = .* into this "
        r".*: it holds a control character or a newline",
    ):
        render("x = {{v}}\n", {"v": value}, "php.ini.in", syntax)


@pytest.mark.parametrize(
    "syntax, template, value, expected",
    [
        # Plain values are written as they are, in every format.
        (Syntax.INI, "memory_limit = {{v}}\n", "1536M", "memory_limit = 1536M\n"),
        (Syntax.NGINX, "worker_processes {{v}};\n", "2", "worker_processes 2;\n"),
        (Syntax.APACHE, "User {{v}}\n", "www-data", "User www-data\n"),
        (Syntax.PLAIN, "dir {{v}}\n", "/tmp/run-1/x", "dir /tmp/run-1/x\n"),
        # Other values are quoted with the file's syntax when they stand alone ...
        (Syntax.INI, "error_log = {{v}}\n", "/tmp/a b.log", 'error_log = "/tmp/a b.log"\n'),
        (Syntax.NGINX, "root {{v}};\n", "/srv/my site", 'root "/srv/my site";\n'),
        (Syntax.NGINX, "add_header X {{v}};\n", "a;b{c}#d", 'add_header X "a;b{c}#d";\n'),
        (Syntax.APACHE, "ServerAdmin {{v}}\n", "a b <c>", 'ServerAdmin "a b <c>"\n'),
        (Syntax.APACHE, "x {{v}}\n", "", 'x ""\n'),
        # ... and kept as they are inside a quoted string of the template.
        (Syntax.APACHE, 'ServerRoot "{{v}}"\n', "/srv/my site", 'ServerRoot "/srv/my site"\n'),
        (
            Syntax.INI,
            '; PHP_INI_SCAN_DIR=":{{v}}" reads it\n',
            "/a b",
            '; PHP_INI_SCAN_DIR=":/a b" reads it\n',
        ),
        # A command-line argument never goes through a shell: no quoting at all.
        (Syntax.ARGV, "-Xmx{{v}}", "a b;$(x)", "-Xmxa b;$(x)"),
    ],
)
def test_values_are_written_with_the_quoting_of_their_file(syntax, template, value, expected):
    assert render(template, {"v": value}, "t.in", syntax) == expected


@pytest.mark.parametrize(
    "syntax, template, value, problem",
    [
        # nginx and Apache expand $variables even inside quotes; php.ini expands ${...}.
        (Syntax.NGINX, "root {{v}};\n", "/srv/$host", r"\$ cannot be written safely"),
        (Syntax.APACHE, "x {{v}}\n", "${APACHE_LOG_DIR}", r"\$ cannot be written safely"),
        (Syntax.INI, "x = {{v}}\n", 'a"b', '" cannot be written safely'),
        (Syntax.INI, "x = {{v}}\n", "a\\b", r"\\ cannot be written safely"),
        (Syntax.APACHE, 'ServerRoot "{{v}}"\n', 'a" b', '" cannot be written inside quotes'),
        (Syntax.NGINX, "x '{{v}}';\n", "it's", "' cannot be written inside quotes"),
        # A value that needs quotes cannot be glued to other text of the template.
        (Syntax.NGINX, "pid {{v}}/nginx.pid;\n", "/a b", "inside a word"),
        # An unknown format gets plain values only.
        (Syntax.PLAIN, "dir {{v}}\n", "a b", "does not know how to quote"),
    ],
)
def test_values_that_cannot_be_written_safely_are_refused(syntax, template, value, problem):
    with pytest.raises(InputError, match=problem):
        render(template, {"v": value}, "t.in", syntax)


MANIFEST = """
name = "demo"
description = "a demo"
language = "python"
io_model = "event-loop"
workloads = ["hello"]

[params]
workers = { type = "int", min = 1, max = 8, default = "{{server_core_count}}" }
mode = { type = "enum", values = ["fast", "safe"], default = "fast" }
verbose = { type = "bool", default = false }

[[process]]
role = "server"
command = ["server", "{{workers}}"]
"""


@pytest.fixture
def manifest(tmp_path: Path):
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "stack.toml").write_text(MANIFEST)
    return parse_manifest(folder / "stack.toml")


def test_resolve_params_substitutes_and_checks_defaults(manifest):
    assert resolve_params(manifest, {}, {"server_core_count": "2"}) == {
        "workers": "2",
        "mode": "fast",
        "verbose": "off",
    }
    with pytest.raises(
        InputError,
        match=r"demo/stack.toml: \[params.workers\] key 'default' "
        r"\(\{\{server_core_count\}\} = '16'\): '16' is not "
        r"allowed for parameter 'workers'; expected a whole "
        r"number from 1 to 8",
    ):
        resolve_params(manifest, {}, {"server_core_count": "16"})


def test_resolve_params_checks_command_line_values_with_the_same_types(manifest):
    base = {"server_core_count": "2"}
    assert resolve_params(manifest, {"workers": "04", "verbose": "yes"}, base) == {
        "workers": "4",
        "mode": "fast",
        "verbose": "on",
    }
    with pytest.raises(
        InputError,
        match=r"--param key 'mode': 'fast\\ninclude /etc/x' is not "
        r"allowed for parameter 'mode'; expected one of: fast, "
        r"safe",
    ):
        resolve_params(manifest, {"mode": "fast\ninclude /etc/x"}, base)
    with pytest.raises(InputError, match=r"--param key 'workers': '²' is not allowed"):
        resolve_params(manifest, {"workers": "²"}, base)
    with pytest.raises(
        InputError,
        match=r"--param key 'colour': the stack 'demo' has no "
        r"parameter 'colour' \(parameters: workers, mode, "
        r"verbose\)",
    ):
        resolve_params(manifest, {"colour": "red"}, base)


def test_every_shipped_template_renders_its_defaults_unchanged():
    """The quoting rules change nothing for the shipped stacks: every default is plain."""
    from stackbench.config.status import Availability, StackStatus
    from stackbench.lab.inventory import load_inventory
    from stackbench.lab.stack import StackConfig, variables_for

    for name, entry in load_inventory().items():
        m = entry.manifest
        commands = {r.name: f"/usr/bin/{r.name}" for r in m.requires}
        status = StackStatus(name, Availability.AVAILABLE, commands=commands)
        cfg = StackConfig(m, status, Path("/tmp/run-1") / name, frozenset({0, 1}), {}, {})
        variables = variables_for(cfg, 8080, {name: 9000 + i for i, name in enumerate(m.ports)})
        for t in m.templates:
            text = (m.stack_dir / t.src).read_text()
            assert render(text, variables, t.src, syntax_for(t.dest)) == render(
                text, variables, t.src, Syntax.ARGV
            ), (name, t.src)
