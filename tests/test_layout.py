"""The house rules of the layout (DESIGN.md, Layout), checked on every import of every module:
memory depends on nothing of ours; review only on memory; agents and dashboard on memory and
review; nothing depends on agents or dashboard. Ceremony events are written only by the acts."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("memory", "review", "agents", "dashboard")
ALLOWED = {
    "memory": {"memory"},
    "review": {"memory", "review"},
    "agents": {"memory", "review", "agents"},
    "dashboard": {"memory", "review", "dashboard"},
}
ACT_WRITERS = {"review/ceremony.py"}


def _imports(source: str) -> list[tuple[str, list[str]]]:
    """(module, names) for every import in the source, function-level ones included."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, [alias.name for alias in node.names]))
    return found


def arrows_against_the_rule(root: Path = ROOT) -> list[str]:
    wrong = []
    for app in APPS:
        for path in sorted((root / app).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            for module, names in _imports(path.read_text()):
                top = module.split(".")[0]
                if top in ("grove", *APPS) and top not in ALLOWED[app]:
                    wrong.append(f"{rel} imports {module}")
                if module == "memory.audit" and "record_act" in names and rel not in ACT_WRITERS:
                    wrong.append(f"{rel} imports audit.record_act")
                imports_audit = module == "memory" and "audit" in names
                if imports_audit and rel not in ACT_WRITERS and "record_act" in path.read_text():
                    wrong.append(f"{rel} calls audit.record_act")
    return wrong


def test_every_import_follows_the_layout():
    assert arrows_against_the_rule() == []


def test_an_arrow_against_the_rule_is_caught(tmp_path):
    for app in APPS:
        (tmp_path / app).mkdir()
    (tmp_path / "memory" / "bad.py").write_text("from review.ceremony import root\n")
    (tmp_path / "review" / "worse.py").write_text("def f():\n    import dashboard.views\n")
    (tmp_path / "agents" / "sneaky.py").write_text("from memory.audit import record_act\n")
    (tmp_path / "dashboard" / "fine.py").write_text("from review import ceremony\n")
    assert arrows_against_the_rule(tmp_path) == [
        "memory/bad.py imports review.ceremony",
        "review/worse.py imports dashboard.views",
        "agents/sneaky.py imports audit.record_act",
    ]


def test_nothing_but_the_acts_writes_a_ceremony_event(db):
    import pytest
    from django.db import transaction

    from memory import audit
    from memory.models import EventKind

    with pytest.raises(PermissionError), transaction.atomic():
        audit.record(EventKind.ROOTED, node=None, actor="someone")
    with pytest.raises(ValueError), transaction.atomic():
        audit.record_act(EventKind.DECAYED, node=1, actor="someone")


def import_graph(root: Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    """module -> the modules of `packages` it imports, function-level and relative imports
    included. `from p import name` points at p.name when that is a module of ours, else at p;
    `import a.b.c` at the longest of a.b.c, a.b, a that is one."""
    files = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    known = set(files)

    def ours(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        targets: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets |= {ours(alias.name) for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                for alias in node.names:
                    targets.add(ours(f"{base}.{alias.name}") if base else ours(alias.name))
        graph[module] = {t for t in targets if t and t != module}
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of `graph`: each set of modules that reach one another (a strongly
    connected component of two or more), sorted; [] when every arrow goes one way."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []
    for start in sorted(graph):
        if start in index:
            continue
        # Tarjan's algorithm, iterative: (module, its targets not yet visited from it).
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            module, targets = work[-1]
            target = next(targets, None)
            if target is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[module])
                if low[module] == index[module]:
                    component = []
                    while True:
                        member = stack.pop()
                        component.append(member)
                        if member == module:
                            break
                    if len(component) > 1:
                        circles.append(sorted(component))
            elif target not in index:
                index[target] = low[target] = len(index)
                stack.append(target)
                work.append((target, iter(sorted(graph.get(target, ())))))
            elif target in stack:
                low[module] = min(low[module], index[target])
    return sorted(circles)


def test_bench_has_no_import_circle():
    assert import_circles(import_graph(ROOT, ("bench",))) == []


def test_an_import_circle_is_caught_at_function_level_and_relative(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("from pkg.b import thing\n")
    (tmp_path / "pkg" / "b.py").write_text("def f():\n    from pkg import a\n")
    (tmp_path / "pkg" / "c.py").write_text("import pkg.b\n")
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sub" / "d.py").write_text("from .. import e\n")
    (tmp_path / "pkg" / "e.py").write_text("from .sub.d import x\n")
    graph = import_graph(tmp_path, ("pkg",))
    assert graph["pkg.c"] == {"pkg.b"}
    assert import_circles(graph) == [["pkg.a", "pkg.b"], ["pkg.e", "pkg.sub.d"]]
    (tmp_path / "pkg" / "b.py").write_text("thing = 1\n")
    (tmp_path / "pkg" / "sub" / "d.py").write_text("x = 1\n")
    assert import_circles(import_graph(tmp_path, ("pkg",))) == []
