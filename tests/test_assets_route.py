"""GET /assets/<image_ref>: serves extracted figures, refuses anything outside the assets dir."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from backend.api.app import create_app
from backend.runtime import build_services
from backend.api.assets import check_reference
from backend.common.errors import InvalidAssetPath
from backend.common.config import Settings
from backend.ingest.loaders.docx import DocxLoader
from backend.providers.local.extractive import ExtractiveChatModel
from tests.conftest import make_settings

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "docx"


@pytest.fixture
def asset_settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path, docx={"extract_images": True, "inline_figure_placeholders": True,
                                         "figure_chunks": True})


@pytest.fixture
def app(asset_settings: Settings, sqlite_store: Any, embedder: Any) -> Flask:
    services = build_services(asset_settings, store=sqlite_store, embedder=embedder,
                              primary=ExtractiveChatModel(embedder))
    return create_app(asset_settings, services)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def extract(settings: Settings, fixture: str, doc_id: str) -> dict[str, Any]:
    """Run the real loader so the served file is one it wrote; returns its image block attrs."""
    assets = settings.resolve_path(settings.docx.assets_dir)
    doc = DocxLoader().load(FIXTURES / fixture, settings.docx, doc_id, assets)
    return next(b.attrs for b in doc.blocks if b.kind == "image")


def test_valid_image_ref_is_served_with_its_content_type(client: FlaskClient, asset_settings: Settings) -> None:
    image = extract(asset_settings, "table_image.docx", "hr/tables")
    response = client.get(f"/assets/{image['image_ref']}")
    assert response.status_code == 200
    assert response.mimetype == "image/png"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    written = asset_settings.resolve_path(asset_settings.docx.assets_dir) / image["image_ref"]
    assert response.data == written.read_bytes()


def test_emf_figure_is_served_as_image_emf(client: FlaskClient, asset_settings: Settings) -> None:
    image = extract(asset_settings, "emf_image.docx", "diagrams")
    response = client.get(f"/assets/{image['image_ref']}")
    assert (response.status_code, response.mimetype) == (200, "image/emf")
    assert response.data[40:44] == b" EMF"


@pytest.mark.parametrize("url", [
    "/assets/../secret.txt",
    "/assets/doc1/../../secret.txt",
    "/assets/%2e%2e/secret.txt",
    "/assets/C:/Windows/win.ini",
    "/assets/doc1/..%5Csecret.txt",
    "/assets/doc1/img%00.png",
])
def test_traversal_absolute_and_nul_references_are_refused_with_400(client: FlaskClient, tmp_path: Path,
                                                                     url: str) -> None:
    (tmp_path / "secret.txt").write_text("do not serve")
    response = client.get(url)
    assert response.status_code == 400
    assert response.get_json()["error"]["code"] == "invalid_asset_path"
    assert b"do not serve" not in response.data


@pytest.mark.parametrize("ref", ["/etc/passwd", "\\\\server\\share\\x.png", "C:\\x.png"])
def test_absolute_references_are_rejected_before_touching_the_filesystem(ref: str) -> None:
    with pytest.raises(InvalidAssetPath, match="image_ref is an absolute path"):
        check_reference(ref)


def test_double_slash_absolute_path_never_reaches_a_file_outside(client: FlaskClient) -> None:
    response = client.get("/assets//etc/passwd", follow_redirects=True)
    assert response.status_code == 404
    assert b"root:" not in response.data


def test_symlink_pointing_outside_the_assets_dir_is_not_followed(client: FlaskClient, asset_settings: Settings,
                                                                 tmp_path: Path) -> None:
    outside = tmp_path / "outside.png"
    outside.write_bytes(b"\x89PNG\r\n\x1a\nsecret")
    folder = asset_settings.resolve_path(asset_settings.docx.assets_dir) / "doc1"
    folder.mkdir(parents=True)
    (folder / "img_001.png").symlink_to(outside)
    response = client.get("/assets/doc1/img_001.png")
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "asset_not_found"


def test_missing_asset_is_a_json_404(client: FlaskClient) -> None:
    response = client.get("/assets/nodoc/img_001.png")
    assert response.status_code == 404
    assert response.get_json()["error"] == {"code": "asset_not_found",
                                            "message": "no asset at image_ref 'nodoc/img_001.png'"}
