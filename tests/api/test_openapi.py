from __future__ import annotations

import pytest
from django.test import Client


@pytest.mark.django_db
def test_it_serves_the_openapi_schema() -> None:
    response = Client().get("/api/openapi.json")

    assert response.status_code == 200
    schema = response.json()
    assert schema["info"]["title"] == "MemoryHub"
    paths = schema["paths"]
    for path in [
        "/api/v1/memories",
        "/api/v1/memories/{memory_id}",
        "/api/v1/memories/{memory_id}/supersede",
        "/api/v1/memories/{memory_id}/restore",
        "/api/v1/memories/{memory_id}/reinforce",
        "/api/v1/memories/{memory_id}/chain",
        "/api/v1/memories/{memory_id}/neighbors",
        "/api/v1/links",
        "/api/v1/links/{link_id}",
    ]:
        assert path in paths, path
    assert set(paths["/api/v1/memories"]) == {"get", "post"}
    assert set(paths["/api/v1/memories/{memory_id}"]) == {"get", "delete"}


@pytest.mark.django_db
def test_it_documents_bearer_auth() -> None:
    schema = Client().get("/api/openapi.json").json()

    schemes = schema["components"]["securitySchemes"]
    assert any(s.get("scheme") == "bearer" for s in schemes.values())
    assert schema["paths"]["/api/v1/memories"]["post"]["security"]


@pytest.mark.django_db
def test_it_serves_the_api_docs() -> None:
    response = Client().get("/api/docs")

    assert response.status_code == 200
    assert b"openapi.json" in response.content


@pytest.mark.django_db
def test_it_renders_the_login_form() -> None:
    response = Client().get("/login/")

    assert response.status_code == 200
    html = response.content.decode()
    assert "<form" in html
    assert 'name="username"' in html
    assert 'name="password"' in html
    assert "csrfmiddlewaretoken" in html


@pytest.mark.django_db
def test_it_sends_anonymous_visitors_to_the_login_page() -> None:
    response = Client().get("/")

    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


@pytest.mark.django_db
def test_every_operation_documents_the_errors_it_can_answer() -> None:
    schema = Client().get("/api/openapi.json").json()

    assert set(schema["components"]["schemas"]["Error"]["required"]) == {"detail", "code"}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            documented = set(operation["responses"])
            assert {"401", "403", "413", "414", "422", "429", "500", "503"} <= documented, (method, path)
            if "{" in path:
                assert "404" in documented, (method, path)
            if method in ("post", "delete"):
                assert "409" in documented, (method, path)


@pytest.mark.django_db
def test_operation_ids_are_unique_and_the_rules_the_code_enforces_are_stated() -> None:
    schema = Client().get("/api/openapi.json").json()

    ids = [operation["operationId"] for operations in schema["paths"].values() for operation in operations.values()]
    assert len(ids) == len(set(ids))
    components = schema["components"]["schemas"]
    assert components["MemoryIn"]["properties"]["text"]["minLength"] == 1
    assert components["RecallIn"]["properties"]["query"]["minLength"] == 1
    assert components["LinkIn"]["properties"]["rel"]["pattern"].startswith("^(?:supersedes|")
