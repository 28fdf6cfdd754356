"""The one pattern every stack, variant, workload and suite name must match.

Names become folder names (a variant's run directory), store keys, report anchors and template
values, so they are restricted to lowercase ASCII letters, digits, '.', '_' and '-', starting
with a letter or digit, at most 64 characters: no '/', no '..' on its own, no spaces, no
control characters.
"""

import re

from stackbench.errors import InputError

NAME_PATTERN = "[a-z0-9][a-z0-9._-]{0,63}"
NAME_RULE = (
    "lowercase letters, digits, '.', '_' and '-', starting with a letter or digit, "
    f"at most 64 characters ({NAME_PATTERN})"
)
_NAME = re.compile(NAME_PATTERN)


def is_name(text: str) -> bool:
    return _NAME.fullmatch(text) is not None


def check_name(text: str, where: str) -> str:
    """`text` if it is a valid name; an InputError naming `where` and the rule otherwise."""
    if not is_name(text):
        raise InputError(f"{where}: {text!r} is not a valid name: use {NAME_RULE}")
    return text
