"""The house rules of the layout (DESIGN.md, Layout), checked on every import of every module:
memory depends on nothing of ours; review only on memory; agents and dashboard on memory and
review; nothing depends on agents or dashboard. web, the htmx plumbing the views share, depends
on nothing of ours either, and review, agents and dashboard may use it (memory has no views).
Ceremony events are written only by the acts. The tests keep house rules of their own: files
named for what they pin, never for the mutation round that found them, and no test module
importing another (shared helpers: tests/_helpers/)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests._helpers import ROOT

APPS = ("memory", "review", "agents", "dashboard", "web")
ALLOWED = {
    "memory": {"memory"},
    "review": {"memory", "review", "web"},
    "agents": {"memory", "review", "web", "agents"},
    "dashboard": {"memory", "review", "web", "dashboard"},
    "web": {"web"},
}
ACT_WRITERS = {"review/ceremony.py"}
PROJECT = ("grove", *APPS, "bench")
DAYTIME_FOLDERS = ("recall", "vectors", "custody")
TOP_LEVEL_MODULES = 25


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


def test_web_imports_nothing_of_the_apps(tmp_path):
    """web is a leaf every app's views may lean on: an import of an app (or of the settings
    package) from it would close a cycle, and memory may not lean on it."""
    for app in APPS:
        (tmp_path / app).mkdir()
    (tmp_path / "web" / "leaky.py").write_text("from memory.errors import GroveError\n")
    (tmp_path / "web" / "late.py").write_text("def f():\n    from review import views\n")
    (tmp_path / "web" / "wired.py").write_text("from grove import settings\n")
    (tmp_path / "memory" / "up.py").write_text("from web.htmx import back\n")
    (tmp_path / "dashboard" / "fine.py").write_text("from web.htmx import act_response\n")
    assert arrows_against_the_rule(tmp_path) == [
        "memory/up.py imports web.htmx",
        "web/late.py imports review",
        "web/leaky.py imports memory.errors",
        "web/wired.py imports grove",
    ]


def test_every_url_name_follows_one_style():
    """Plain snake_case names, no namespace, each once (the admin's namespace is Django's own):
    templates and views reverse them by name alone."""
    from django.urls import URLPattern, URLResolver, get_resolver

    names: list[str] = []
    namespaces: list[str] = []

    def walk(patterns: list) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver) and pattern.namespace != "admin":
                if pattern.namespace:
                    namespaces.append(pattern.namespace)
                walk(pattern.url_patterns)
            elif isinstance(pattern, URLPattern) and pattern.name:
                names.append(pattern.name)

    walk(get_resolver().url_patterns)
    assert namespaces == []
    assert [name for name in names if not re.fullmatch(r"[a-z]+(_[a-z]+)*", name)] == []
    assert sorted({name for name in names if names.count(name) > 1}) == []


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


def test_no_import_circle_anywhere():
    assert import_circles(import_graph(ROOT, PROJECT)) == []


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


# --- inside the engine ----------------------------------------------------------------------------


def sleep_arrows_from_daytime_folders(root: Path = ROOT) -> list[str]:
    """The recall, vectors and custody folders serve the day: none imports a sleep step."""
    wrong = []
    for folder in DAYTIME_FOLDERS:
        for path in sorted((root / "memory" / folder).rglob("*.py")):
            for module, _ in _imports(path.read_text()):
                if module == "memory.sleep" or module.startswith("memory.sleep."):
                    wrong.append(f"{path.relative_to(root).as_posix()} imports {module}")
    return wrong


def test_daytime_folders_import_no_sleep_step():
    assert sleep_arrows_from_daytime_folders() == []


def test_a_sleep_import_from_a_daytime_folder_is_caught(tmp_path):
    for folder in DAYTIME_FOLDERS:
        (tmp_path / "memory" / folder).mkdir(parents=True)
    (tmp_path / "memory" / "custody" / "x.py").write_text("def f():\n    import memory.sleep.run\n")
    (tmp_path / "memory" / "recall" / "y.py").write_text("from memory.reach import mark\n")
    assert sleep_arrows_from_daytime_folders(tmp_path) == [
        "memory/custody/x.py imports memory.sleep.run"
    ]


def _loaded_by(module: str) -> list[str]:
    """The memory modules a fresh interpreter holds after Django's setup and `import module`."""
    import json
    import os
    import subprocess
    import sys

    script = (
        "import django, json, sys; django.setup(); "
        f"import {module}; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('memory'))))"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "grove.settings"}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_write_path_loads_no_sleep_step_and_no_integrity_check():
    loaded = _loaded_by("memory.write")
    assert "memory.write" in loaded and "memory.reach" in loaded  # the probe sees what it loads
    night = [m for m in loaded if m.startswith(("memory.sleep", "memory.custody"))]
    assert night == []


def test_the_probe_sees_a_sleep_step_when_one_is_loaded():
    assert "memory.sleep.decay" in _loaded_by("memory.sleep.run")


def test_the_engine_has_few_top_level_modules():
    """Folders stand where name prefixes did (recall/, vectors/, custody/, sleep/ ...)."""
    top = sorted(p.stem for p in (ROOT / "memory").glob("*.py") if p.stem != "__init__")
    assert len(top) <= TOP_LEVEL_MODULES, top


# --- inside the tests --------------------------------------------------------------------------

# A mutation round, its mutants or its blind spots named in a file or folder: what a test pins
# says where it goes (round5a, test_mutation_whole, blind_spots), never how it was found.
ROUND_NAME = re.compile(r"(?:^|_)(?:round\d+[a-z]?|mutations?|mutants?|blind_spots?)(?:_|$)")


def round_named_files(root: Path = ROOT) -> list[str]:
    """Files and folders under tests/ named after a mutation round rather than a behaviour."""
    tests = root / "tests"
    return [
        path.relative_to(root).as_posix()
        for path in sorted(tests.rglob("*"))
        if "__pycache__" not in path.parts and ROUND_NAME.search(path.stem)
    ]


def test_no_test_file_is_named_after_a_round():
    assert round_named_files() == []


def test_a_round_named_file_is_caught(tmp_path):
    tests = tmp_path / "tests"
    for folder in ("engine", "sleep", "mutants", "recall"):
        (tests / folder).mkdir(parents=True)
    for name in (
        "test_mutation_whole.py",  # caught
        "test_blind_spots.py",  # caught
        "sleep/test_round6.py",  # caught
        "mutants/test_write.py",  # its folder caught
        "recall/test_rank_round5b.py",  # caught
        "test_ground.py",  # a word with "round" in it: fine
        "engine/test_around.py",  # fine
        "engine/test_round_trip.py",  # no round number: fine
    ):
        (tests / name).write_text("")
    assert round_named_files(tmp_path) == [
        "tests/mutants",
        "tests/recall/test_rank_round5b.py",
        "tests/sleep/test_round6.py",
        "tests/test_blind_spots.py",
        "tests/test_mutation_whole.py",
    ]


def _imported(node: ast.AST) -> list[str]:
    """What an import statement names: each module, and `module.name` for each name it takes
    from one (a relative import's module without its dots)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        return [module, *(f"{module}.{alias.name}".lstrip(".") for alias in node.names)]
    return []


def imports_of_test_modules(root: Path = ROOT) -> list[str]:
    """Imports, in any module under tests/ (conftest and helpers included), of a test module:
    tests.x.test_y, a bare test_y (a sibling on sys.path) or a relative .test_y, function-level
    imports included. Test modules share through tests/_helpers/ and conftest fixtures."""
    tests = root / "tests"
    test_modules = {path.stem for path in tests.rglob("test_*.py")}
    wrong = []
    for path in sorted(tests.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            for target in _imported(node):
                if target.rpartition(".")[2] in test_modules:
                    wrong.append(f"{rel} imports {target}")
    return wrong


def test_no_test_module_imports_another():
    assert imports_of_test_modules() == []


def test_a_test_module_importing_another_is_caught(tmp_path):
    tests = tmp_path / "tests"
    for folder in ("_helpers", "recall", "sleep"):
        (tests / folder).mkdir(parents=True)
    files = {
        "conftest.py": "from tests._helpers.nodes import store\n",  # fine: a helper
        "_helpers/nodes.py": "def store(): ...\n",
        "_helpers/leaky.py": "from tests.recall import test_rank\n",
        "recall/test_rank.py": "from django.test import TestCase\nfrom tests import _helpers\n",
        "recall/test_why.py": "from tests.recall.test_rank import EVERYTHING\n",
        "sleep/test_decay.py": "def test_x():\n    import test_rank\n",
        "sleep/test_reach.py": "from .test_decay import chain\n",
    }
    for name, text in files.items():
        (tests / name).write_text(text)
    assert imports_of_test_modules(tmp_path) == [
        "tests/_helpers/leaky.py imports tests.recall.test_rank",
        "tests/recall/test_why.py imports tests.recall.test_rank",
        "tests/sleep/test_decay.py imports test_rank",
        "tests/sleep/test_reach.py imports test_decay",
    ]
