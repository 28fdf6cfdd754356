"""`{{name}}` templates for manifests and server config files, rendered safely.

Double braces leave nginx/Apache/shell braces alone. An unknown name is an error that names
the file it came from, so a typo in a manifest never turns into an empty string.

Every value is written with the rules of the file it lands in, because parameter values come
from suites and the command line and the servers run as root:
- no value may hold a control character (newline, carriage return, tab, escape ...), in any
  file or command line: one newline would add a directive of the user's choice;
- in configuration files (php.ini, php-fpm, nginx, Apache) a value of plain characters
  (letters, digits and . _ : / @ + , -) is written as it is; any other value is quoted and
  escaped with the file's own syntax, or refused when that syntax cannot hold it safely
  (e.g. '$', which nginx and Apache expand even inside quotes);
- a command-line argument is passed to the process without a shell, so it needs no quoting.
"""

import enum
import re
from collections.abc import Mapping

from stackbench.config.manifest import Manifest, control_free, has_template
from stackbench.errors import InputError

_VAR = re.compile(r"\{\{\s*([A-Za-z0-9_.\-]+)\s*\}\}")
_PLAIN = re.compile(r"[A-Za-z0-9._:/@+,-]+")
_QUOTES = "\"'"


class Syntax(enum.Enum):
    """The format a template is rendered into."""

    ARGV = "command-line argument"  # no shell: any printable text is one argument
    INI = "php.ini / php-fpm configuration"
    NGINX = "nginx configuration"
    APACHE = "Apache configuration"
    PLAIN = "configuration file"  # a format stackbench does not know: plain values only


# What each quoted string of a format cannot hold, besides its own quote character.
# php.ini expands ${...} and treats a backslash specially inside double quotes; nginx and
# Apache expand $variables / ${VAR} inside quotes and use backslash as the escape character.
_NOT_IN_QUOTES = {Syntax.INI: "\\$", Syntax.NGINX: "\\$", Syntax.APACHE: "\\$"}


def syntax_for(file_name: str) -> Syntax:
    """The format of a rendered file, from its name (`stackbench.ini`, `nginx.conf` ...)."""
    name = file_name.lower().removesuffix(".in")
    if name.endswith(".ini") or name.startswith("php-fpm"):
        return Syntax.INI
    if "nginx" in name:
        return Syntax.NGINX
    if "apache" in name or "httpd" in name:
        return Syntax.APACHE
    return Syntax.PLAIN


def render(
    text: str, variables: Mapping[str, str], where: str, syntax: Syntax = Syntax.ARGV
) -> str:
    """`text` with every {{name}} replaced by its value, written safely for `syntax`."""

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in variables:
            known = ", ".join(sorted(variables))
            raise InputError(f"{where}: unknown template variable {{{{{name}}}}}; known: {known}")
        value = variables[name]
        problem = "" if control_free(value) else "it holds a control character or a newline"
        if not problem and syntax is not Syntax.ARGV:
            value, problem = _written(value, syntax, text, match.start(), match.end())
        if problem:
            raise InputError(
                f"{where}: cannot write {{{{{name}}}}} = {_show(value)} into this "
                f"{syntax.value}: {problem}"
            )
        return value

    return _VAR.sub(substitute, text)


def _written(value: str, syntax: Syntax, text: str, start: int, end: int) -> tuple[str, str]:
    """(the value as written at text[start:end], '') or (value, why it cannot be written)."""
    quote = _open_quote(text[text.rfind("\n", 0, start) + 1 : start])
    if quote:  # already inside a quoted string of the template
        forbidden = quote + _NOT_IN_QUOTES.get(syntax, "\\$")
        bad = sorted({c for c in value if c in forbidden})
        if syntax is Syntax.PLAIN or bad:
            return value, (
                f"{' '.join(bad) or 'its characters'} cannot be written inside quotes here"
            )
        return value, ""
    if _PLAIN.fullmatch(value):
        return value, ""
    if syntax is Syntax.PLAIN:
        return value, (
            "stackbench does not know how to quote values in this file; use only "
            "letters, digits and . _ : / @ + , -"
        )
    before = text[start - 1] if start else "\n"
    after = text[end] if end < len(text) else "\n"
    if not (before.isspace() or before == "=") or not (after.isspace() or after == ";"):
        return value, (
            "it needs quotes, but the template puts it inside a word; use only "
            "letters, digits and . _ : / @ + , -"
        )
    bad = sorted({c for c in value if c in '"' + _NOT_IN_QUOTES[syntax]})
    if bad:
        return value, f"{' '.join(bad)} cannot be written safely in this file"
    return f'"{value}"', ""


def _open_quote(line_before: str) -> str:
    """The quote character still open at the end of `line_before`, or ''."""
    quote = ""
    escaped = False
    for char in line_before:
        if escaped:
            escaped = False
        elif quote and char == "\\":
            escaped = True
        elif quote and char == quote:
            quote = ""
        elif not quote and char in _QUOTES:
            quote = char
    return quote


def _show(value: str) -> str:
    return repr(value) if len(value) <= 60 else repr(value[:57] + "...")


def names_in(text: str) -> set[str]:
    return set(_VAR.findall(text))


def resolve_params(
    manifest: Manifest, overrides: Mapping[str, str], variables: Mapping[str, str]
) -> dict[str, str]:
    """Every parameter of the stack: the override or the default, checked against its type.

    Overrides come from a suite (already checked when the plan was made) or from `--param`;
    they are checked again here so no path skips the check. A default may refer to template
    variables ("{{server_core_count}}"): it is checked once substituted.
    """
    checked = manifest.check_params(dict(overrides), "--param")
    resolved = {}
    for param in manifest.params:
        if param.name in checked:
            resolved[param.name] = checked[param.name]
            continue
        where = f"{manifest.path}: [params.{param.name}] key 'default'"
        value = param.default
        if has_template(value):
            value = render(value, variables, where)
            where += f" ({param.default} = {value!r})"
        resolved[param.name] = param.check(value, where)
    return resolved
