"""``rag ingest cancel [--series S]`` and the Ctrl-C handler of a running ``rag ingest``.

Both ask for the same thing: stop after the group in flight is written, leave the candidate
version resumable and exit 130 (``backend.ingest.cancel``). A second Ctrl-C stops at once (a
killed run is as safe: it resumes the same way, only the group in flight is redone).
"""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import Any, Callable

import click

from backend.cli.context import settings_from
from backend.common.errors import RagError
from backend.ingest.cancel import CancelToken, default_cancel_dir, request_cancel


class CancelOnInterrupt:
    """While the block runs, the first SIGINT sets ``token`` (a clean cancel between groups) and
    the second raises ``KeyboardInterrupt`` as usual. Outside the main thread: does nothing."""

    def __init__(self, token: CancelToken, say: Callable[[str], None]) -> None:
        self.token, self.say = token, say
        self._previous: Any = None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.token.is_set:
            raise KeyboardInterrupt
        self.token.set("Ctrl-C")
        self.say("cancelling: the group in flight is written first (Ctrl-C again to stop at once; "
                 "the run resumes either way)")

    def __enter__(self) -> CancelOnInterrupt:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


@click.command("cancel")
@click.option("--series", default=None, help="The index series to cancel (its configured index_name, e.g. "
              "KB_SAMPLE_V1, or any of its versions); default: every running ingest.")
@click.pass_context
def cancel_command(ctx: click.Context, series: str | None) -> None:
    """Ask running ingests to stop after the group in flight: they exit 130 and resume when run
    again. Works from any shell on the machine (a marker file beside the store)."""
    from backend.core.services.series_lock import series_key
    from backend.core.versions import VersionNaming

    settings = settings_from(ctx)
    try:
        key = series_key(VersionNaming(settings.ingest.version_name_template), series) if series else None
    except RagError as exc:
        raise click.BadParameter(exc.user_message, param_hint="--series") from None
    path = request_cancel(default_cancel_dir(settings), key)
    click.echo(f"cancel requested for {key or 'every series'} ({path}); a running ingest stops after its "
               "group in flight")
