"""`{{name}}` templates for manifests and server config files.

Double braces leave nginx/Apache/shell braces alone. An unknown name is an error that names
the file it came from, so a typo in a manifest never turns into an empty string.
"""

import re
from collections.abc import Mapping

from stackbench.errors import InputError

_VAR = re.compile(r"\{\{\s*([A-Za-z0-9_.\-]+)\s*\}\}")


def render(text: str, variables: Mapping[str, str], where: str) -> str:
    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in variables:
            known = ", ".join(sorted(variables))
            raise InputError(f"{where}: unknown template variable {{{{{name}}}}}; known: {known}")
        return variables[name]

    return _VAR.sub(substitute, text)


def names_in(text: str) -> set[str]:
    return set(_VAR.findall(text))
