"""The package layout of docs/architecture.md, checked on the source: dependency direction, no
import circle, imports at the top of modules."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "stackbench"

# What each layer must never import (the layers above it). Sibling packages of the machine side
# (services, verify, drivers) may use lab's small utilities; circles are caught below.
ABOVE_MACHINE = {"session", "remote", "engine", "store", "analysis", "report", "commands", "cli"}
FORBIDDEN = {
    "config": {"lab", "services", "verify", "drivers"} | ABOVE_MACHINE,
    # lab is the bottom of the machine side: a stack is composed with its services and
    # verifiers above it, in session/.
    "lab": {"services", "verify", "drivers"} | ABOVE_MACHINE,
    "services": ABOVE_MACHINE,
    "verify": ABOVE_MACHINE,
    "drivers": ABOVE_MACHINE,
    # A stack with its services and verifiers: above the machine side, below its users.
    "session": ABOVE_MACHINE - {"session"},
    # Other hosts: the SSH transport and the agent, which drives the machine side over there.
    "remote": ABOVE_MACHINE - {"session", "remote"},
    "engine": {"analysis", "report", "commands", "cli"},
    "store": {"lab", "services", "verify", "drivers"} | ABOVE_MACHINE - {"store"},
    "analysis": {
        "lab",
        "services",
        "verify",
        "drivers",
        "session",
        "remote",
        "engine",
        "report",
        "commands",
        "cli",
    },
    "report": {
        "lab",
        "services",
        "verify",
        "drivers",
        "session",
        "remote",
        "engine",
        "commands",
        "cli",
    },
    "commands": {"cli"},
}
TOP_LEVEL = {"__init__.py", "__main__.py", "cli.py", "errors.py"}
# Optional heavy dependencies that may be imported where they are used.
LAZY_ALLOWED = {"hdrh", "matplotlib", "playwright", "ruptures", "scipy"}


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(p for p in parts if p != "__init__")
        found[name] = path
    return found


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module, at top level?) for every stackbench import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = set(map(id, tree.body))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            out += [(n, id(node) in top) for n in names]
        elif isinstance(node, ast.Import):
            out += [(a.name, id(node) in top) for a in node.names]
    return out


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_top_level_holds_only_the_entry_points_and_errors() -> None:
    files = {p.name for p in PACKAGE.glob("*.py")}
    assert files == TOP_LEVEL


def test_every_subpackage_has_its_rules() -> None:
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert packages == set(FORBIDDEN), "a package without a FORBIDDEN entry, or a stale one"


def test_every_subpackage_says_what_it_owns() -> None:
    for init in PACKAGE.glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc, f"{init.parent.name}/__init__.py has no docstring"


def test_dependencies_point_downward() -> None:
    wrong = []
    for module, path in _modules().items():
        layer = _layer(module)
        for imported, _top in _imports(path):
            if not imported.startswith("stackbench."):
                continue
            if _layer(imported) in FORBIDDEN.get(layer, set()):
                wrong.append(f"{module} imports {imported}")
    assert not wrong, "\n".join(wrong)


def test_imports_sit_at_the_top_of_modules() -> None:
    hidden = [
        f"{module}: {imported}"
        for module, path in _modules().items()
        for imported, top in _imports(path)
        if not top and imported.split(".")[0] not in LAZY_ALLOWED
    ]
    assert not hidden, "\n".join(sorted(set(hidden)))


def test_no_import_circle_between_modules() -> None:
    modules = _modules()
    graph = {m: {i for i, _ in _imports(p) if i in modules and i != m} for m, p in modules.items()}
    # A package's __init__ re-exporting its own modules is not a circle of the design.
    for m in graph:
        graph[m] = {i for i in graph[m] if not (m.startswith(i + ".") and i in modules)}
    cycle = _find_cycle(graph)
    assert cycle is None, " -> ".join(cycle or [])


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_run_command_stays_thin() -> None:
    """commands/run.py prints what the engine decides (issue 30: at most 300 lines, no plan
    building or analysis loop, no test hook in a production signature)."""
    run_py = (PACKAGE / "commands" / "run.py").read_text()
    assert len(run_py.splitlines()) <= 300
    assert "_until_decided" not in run_py
    hooks = [p for p in PACKAGE.rglob("*.py") if "clock_offsets_for_tests" in p.read_text()]
    assert hooks == []
