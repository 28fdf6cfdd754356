import pytest

from stackbench.errors import InputError
from stackbench.lab.templating import names_in, render


def test_render_replaces_double_brace_names_only():
    text = "server { listen {{host}}:{{ port }}; } ${HOME} {single}"
    out = render(text, {"host": "127.0.0.1", "port": "8080"}, "nginx.conf")
    assert out == "server { listen 127.0.0.1:8080; } ${HOME} {single}"


def test_dotted_names():
    assert render("{{cmd.php-fpm}} -F", {"cmd.php-fpm": "/usr/sbin/php-fpm8.2"}, "x") == \
        "/usr/sbin/php-fpm8.2 -F"


def test_unknown_name_names_the_file():
    with pytest.raises(InputError, match=r"nginx.conf.in: unknown template variable \{\{prot\}\}"):
        render("listen {{prot}};", {"port": "1"}, "nginx.conf.in")


def test_names_in():
    assert names_in("{{a}} {{ b.c }} {d}") == {"a", "b.c"}
