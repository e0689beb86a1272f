"""The house rules of the layout (DESIGN.md, Layout), checked on every import of every module:
memory depends on nothing of ours; review only on memory; agents and dashboard on memory and
review; nothing depends on agents or dashboard. web, the htmx plumbing the views share, depends
on nothing of ours either, and review, agents and dashboard may use it (memory has no views).
Ceremony events are written only by the acts."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("memory", "review", "agents", "dashboard", "web")
ALLOWED = {
    "memory": {"memory"},
    "review": {"memory", "review", "web"},
    "agents": {"memory", "review", "web", "agents"},
    "dashboard": {"memory", "review", "web", "dashboard"},
    "web": {"web"},
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
