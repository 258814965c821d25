"""The import rules of ``docs/architecture.md``: each layer imports only from the layers below.

Checked on the source (every ``import`` / ``from`` statement, at any depth, type-checking blocks
included), so a new module cannot break them unnoticed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rxacp"

# layer -> the rxacp layers it may import (besides itself and the shared leaf modules)
SHARED = {"errors", "_error_codes", "_durations", "_compat", "jsonrpc", "capabilities", "tracing"}
MAY_IMPORT: dict[str, set[str]] = {
    "schema": set(),
    "transport": {"schema"},
    "session": {"schema", "transport"},
    "roles": {"schema", "transport", "session"},
    "client": {"schema", "transport", "session", "roles"},
    "agent": {"schema", "transport", "session", "roles"},
}


# Known exceptions, each named here with its reason (docs/architecture.md lists them as debt):
# AcpTransport.close_gracefully returns the lifecycle Completion, which is an AcpObservable of
# the session layer; imported inside the method, so importing a transport loads no engine.
EXCEPTIONS: dict[str, set[str]] = {"transport/base.py": {"session"}}


def _rxacp_imports(path: Path) -> set[str]:
    """The top-level rxacp modules/packages ``path`` imports (``rxacp.X`` -> ``X``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = path.relative_to(PACKAGE.parent).with_suffix("").parts  # ('rxacp', 'client', 'x')
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(here[: len(here) - node.level])
                if path.name == "__init__.py":
                    base = list(here[: len(here) - node.level + 1])
                module = ".".join(base + ([node.module] if node.module else []))
                names = [module] if node.module else [f"{module}.{a.name}" for a in node.names]
            else:
                names = [node.module or ""]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "rxacp" and len(parts) > 1:
                found.add(parts[1])
    return found


@pytest.mark.parametrize("layer", sorted(MAY_IMPORT))
def test_each_layer_imports_only_the_layers_below_it(layer: str) -> None:
    allowed = MAY_IMPORT[layer] | SHARED | {layer}
    wrong = {
        name: sorted(wrong)
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        if (name := str(path.relative_to(PACKAGE)))
        and (wrong := _rxacp_imports(path) - allowed - EXCEPTIONS.get(name, set()))
    }
    assert wrong == {}


def test_the_checker_sees_relative_and_absolute_imports() -> None:
    assert "session" in _rxacp_imports(PACKAGE / "client" / "async_client.py")
    assert "schema" in _rxacp_imports(PACKAGE / "roles" / "handlers.py")
    assert _rxacp_imports(PACKAGE / "session" / "__init__.py") == {"session"}


def test_the_engine_names_no_role() -> None:
    """``session/`` is role-free: the role kit (``roles/``) and the roles name clients, agents
    and prompt turns; the engine's source mentions none of their classes or concepts."""
    words = ("AcpClient", "AcpAgent", "AcpSync", "AcpAsync", "PromptContext", "prompt turn")
    found = {
        (str(path.relative_to(PACKAGE)), word)
        for path in sorted((PACKAGE / "session").rglob("*.py"))
        for word in words
        if word in path.read_text(encoding="utf-8")
    }
    assert found == set()


def _engine_imports(path: Path) -> set[str]:
    """The ``session/`` modules ``path`` (a module of ``session/``) imports, type-checking
    blocks included (``from .x import ...`` and ``rxacp.session.x``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.level == 1:
                found.add(node.module.split(".")[0])
            elif node.module.startswith("rxacp.session."):
                found.add(node.module.split(".")[2])
    return found - {path.stem}


def test_the_engine_has_no_import_cycle() -> None:
    """The engine's parts are tables that do not know each other or the session: its import
    graph (type-only imports too) is acyclic, so ``AcpSession`` and ``Connection`` sit on top
    and the tables below them."""
    graph = {p.stem: _engine_imports(p) for p in (PACKAGE / "session").glob("*.py")}
    graph.pop("__init__")
    state: dict[str, str] = {}

    def cycle_from(node: str, trail: list[str]) -> list[str] | None:
        state[node] = "open"
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == "open":
                return [*trail[trail.index(dep) :], dep] if dep in trail else [node, dep]
            if dep not in state and (found := cycle_from(dep, [*trail, dep])) is not None:
                return found
        state[node] = "done"
        return None

    cycles = [c for n in sorted(graph) if n not in state and (c := cycle_from(n, [n]))]
    assert cycles == []
    assert "connection" in graph["session"] and "session" not in graph["connection"]
