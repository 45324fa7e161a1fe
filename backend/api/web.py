"""``GET /``: the chat page. Plain ES modules and CSS under ``backend/api/static`` (package
data), served by Flask's static route; nothing comes from a CDN. The page itself is
public (it must be able to ask for an API key); everything it calls is not. Its
Content-Security-Policy allows only this origin's scripts, styles, images and fetches,
so even a payload that escaped the page's escaping could not run."""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, send_file

bp = Blueprint("web", __name__)
STATIC = Path(__file__).parent / "static"
PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
            "form-action 'none'; base-uri 'none'; frame-ancestors 'none'")


@bp.get("/")
def index() -> Response:
    response = send_file(STATIC / "index.html", mimetype="text/html", max_age=0)
    response.headers["Content-Security-Policy"] = PAGE_CSP
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Cache-Control"] = "no-store"
    return response
