"""``GET /assets/<image_ref>``: the figure images the DOCX loader wrote.

A figure chunk names its picture by ``image_ref``, a path relative to
``docx.assets_dir``. This route serves exactly those files and nothing else:
the reference is checked before it touches the filesystem (no NUL, no absolute
path, no ``..`` segment, no backslash), then resolved, symlinks included, and
must still lie inside the assets dir. SVGs are served with a Content-Security-
Policy that blocks scripts, since a document can carry any SVG.

With ``access.enabled`` a figure is served only when the principal may see at
least one chunk citing it in the version its domain's alias (``X-RAG-Domain``)
serves; otherwise 404, the same answer as for a missing file.

A request signed by ``signed_assets`` (``?exp=...&sig=...``, issued in an answer when
API keys are on) needs no key and no visibility check: the signature was only given to
a reader who could see the figure, and it expires.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath


import structlog
from flask import Blueprint, Response, g, request, send_file

from backend.api.runtime import current_runtime
from backend.api import access, metrics, signed_assets
from backend.common.errors import AssetNotFound, InvalidAssetPath
from backend.core.types import Visibility
from backend.runtime import Runtime
from backend.common.config import Settings

assets_bp = Blueprint("assets", __name__)
log = structlog.get_logger(__name__)

#: The content types the DOCX loader writes, by the extension it gives each one.
CONTENT_TYPES = {
    "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "bmp": "image/bmp",
    "tiff": "image/tiff", "emf": "image/emf", "wmf": "image/wmf", "svg": "image/svg+xml", "webp": "image/webp",
    "pict": "image/x-pict", "ico": "image/x-icon", "jxr": "image/vnd.ms-photo", "heic": "image/heic",
    "avif": "image/avif",
}
_DRIVE = re.compile(r"^[A-Za-z]:")


def check_reference(image_ref: str) -> PurePosixPath:
    """The reference as a relative POSIX path, or ``InvalidAssetPath``."""
    problem = None
    if "\x00" in image_ref:
        problem = "contains a NUL byte"
    elif image_ref.startswith(("/", "\\")) or _DRIVE.match(image_ref):
        problem = "is an absolute path"
    elif "\\" in image_ref:
        problem = "contains a backslash"
    elif any(part in ("..", ".", "") for part in image_ref.split("/")):
        problem = "contains an empty, '.' or '..' segment"
    if problem:
        raise InvalidAssetPath(f"image_ref {problem}; expected a relative path like '<doc>/img_001.png'",
                               field="image_ref")
    return PurePosixPath(image_ref)


def resolve_asset(root: Path, image_ref: str) -> Path:
    """The file ``image_ref`` names under ``root``; ``AssetNotFound`` if it is missing,
    not a regular file, or resolves (through a symlink) outside ``root``."""
    reference = check_reference(image_ref)
    base = root.resolve()
    try:
        target = base.joinpath(*reference.parts).resolve()
        found = target.is_relative_to(base) and target.is_file()
    except OSError as exc:  # a name over the file system's limit (ENAMETOOLONG), a loop: no such asset (issue 49 L1)
        raise AssetNotFound(f"no asset at image_ref {image_ref[:200]!r}") from exc
    if not found:
        raise AssetNotFound(f"no asset at image_ref {image_ref[:200]!r}")
    return target


def check_visible(services: Runtime, image_ref: str, domain: str | None, visibility: Visibility) -> None:
    """``AssetNotFound`` unless a chunk the reader may see, in the version the domain's alias
    serves now, cites ``image_ref``: a hidden figure answers exactly like a missing one."""
    route = services.chat.routing.route(domain)
    version = services.stores.admin.resolve_alias(route.target)
    if version is None or image_ref not in services.stores.vectors.asset_refs(version, visibility=visibility):
        metrics.count_denial("asset")
        raise AssetNotFound(f"no asset at image_ref {image_ref!r}")


def signed_request(settings: Settings) -> bool:
    """Whether this request is for an asset with a valid, unexpired signature, issued to the
    principal its credential names when it carries one (issue 49 L4)."""
    if request.endpoint != "assets.get_asset" or "sig" not in request.args:
        return False
    if "rag_signed_asset" not in g:  # asked by the authentication hook and by the route: decided once
        g.rag_signed_asset = _signed(settings)
    return bool(g.rag_signed_asset)


def _signed(settings: Settings) -> bool:
    image_ref = (request.view_args or {}).get("image_ref", "")
    issued_to = request.args.get("p") or None
    if not signed_assets.verify(settings, image_ref, request.args.get("exp"), request.args.get("sig"),
                                principal=issued_to):
        return False
    if settings.access.enabled and (request.headers.get(access.API_KEY_HEADER) or request.headers.get("Authorization")):
        caller = access.principal_or_none()
        if caller is None or caller.name != issued_to:
            return False  # another principal's (or a bad) credential: its own check decides
    log.info("assets.signed_served", image_ref=image_ref[:200], principal=issued_to)
    return True


@assets_bp.get("/assets/<path:image_ref>")
def get_asset(image_ref: str) -> Response:
    services = current_runtime()
    settings = services.settings
    check_reference(image_ref)
    domain = (request.headers.get("X-RAG-Domain") or "").strip() or None
    visibility = None if signed_request(settings) else access.visibility_for(domain)
    if visibility is not None:
        check_visible(services, image_ref, domain, visibility)
    path = resolve_asset(settings.resolve_path(settings.docx.assets_dir), image_ref)
    mimetype = CONTENT_TYPES.get(path.suffix.lstrip(".").lower(), "application/octet-stream")
    response = send_file(path, mimetype=mimetype, conditional=True, max_age=3600)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
    return response
