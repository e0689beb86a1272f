"""The OpenAPI description stays true: every API route is described, every description resolves."""

from __future__ import annotations

import re

from django.urls import URLPattern, URLResolver, get_resolver, resolve

from agents.openapi import SPEC

PREFIX = "/api/v1"


def _api_routes() -> set[str]:
    """Every route under /api/v1/, as OpenAPI paths ({node_id} for <int:node_id>)."""
    found: set[str] = set()

    def walk(patterns, prefix: str) -> None:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            elif pattern.name == "api_no_route":
                continue  # the catch-all JSON 404, described in the spec's info, not a path
            elif isinstance(pattern, URLPattern) and route.startswith("api/v1/"):
                found.add("/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route[len("api/v1/") :]))

    walk(get_resolver().url_patterns, "")
    return found


def test_the_resolver_walk_finds_the_api():
    assert {"/nodes", "/recall", "/walk/step", "/nodes/{node_id}/root"} <= _api_routes()


def test_every_api_route_is_described():
    assert _api_routes() - set(SPEC["paths"]) == set()


def test_every_described_path_resolves_to_an_api_view():
    for path in SPEC["paths"]:
        match = resolve(PREFIX + path.replace("{node_id}", "7"))
        assert match.func.__module__ == "agents.views", path


def test_every_operation_declares_its_responses():
    for path, item in SPEC["paths"].items():
        for method, operation in item.items():
            assert method in {"get", "post"}, path
            assert operation["responses"], (path, method)
            assert operation["summary"], (path, method)


def test_it_is_served_without_a_token(client, db):
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    assert response.json()["openapi"] == "3.1.0"
    assert set(response.json()["paths"]) == set(SPEC["paths"])


def test_every_described_method_is_accepted_and_no_other(client, db):
    for path, item in SPEC["paths"].items():
        url = PREFIX + path.replace("{node_id}", "7")
        for method in ("get", "post"):
            status = getattr(client, method)(url).status_code
            if method in item:
                # Without a token, only the operations the spec marks public answer.
                public = item[method].get("security", SPEC["security"]) == []
                assert status == (200 if public else 401), (path, method, status)
            else:
                assert status == 405, (path, method, status)


def _operations():
    for path, item in SPEC["paths"].items():
        if path == "/openapi.json":
            continue
        for method, operation in item.items():
            yield f"{method} {path}", operation


def _schemas(node):
    """Every schema object inside `node`, nested at any depth."""
    if isinstance(node, dict):
        if "type" in node or "enum" in node:
            yield node
        for value in node.values():
            yield from _schemas(value)
    elif isinstance(node, list):
        for value in node:
            yield from _schemas(value)


def test_every_operation_documents_its_400_and_404():
    for name, operation in _operations():
        assert {"400", "404"} <= set(operation["responses"]), name


def test_every_integer_the_api_reads_is_bounded_as_the_validation_bounds_it():
    inputs = [
        [operation.get("parameters", []), operation.get("requestBody", {})]
        for _, operation in _operations()
    ]
    integers = list(_schemas([inputs, SPEC["components"]["schemas"]["NodeWrite"]]))
    assert any(s.get("type") == "integer" for s in integers)
    for schema in integers:
        if schema.get("type") == "integer":
            assert "minimum" in schema and "maximum" in schema, schema


def test_every_request_object_refuses_fields_the_code_refuses():
    for name, operation in _operations():
        body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
        schema = body.get("schema", {})
        if "$ref" in schema:
            schema = SPEC["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
        if schema:
            assert schema.get("additionalProperties") is False, name
            assert schema.get("properties"), name
