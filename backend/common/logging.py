"""structlog configuration, done once by each entry point.

Logs go to stderr (stdout is for results). ``json`` renders one JSON object per
line for production; ``console`` is for people. Noisy third-party loggers are
quietened, and no chunk text or PII is ever passed as a log field.
"""

from __future__ import annotations

import logging
import sys

import structlog

from backend.common.config import LoggingSettings

#: libraries kept at WARNING; ``atlassian`` logs each answer's body (a Confluence page's text) at DEBUG
_QUIET = ("transformers", "sentence_transformers", "presidio-analyzer", "presidio-anonymizer", "urllib3",
          "filelock", "huggingface_hub", "oci", "werkzeug", "httpx", "tldextract", "atlassian")


class _BarSafeLogger(structlog.PrintLogger):
    """Prints a log line above the progress bars (``backend.common.progress``): the bars are
    cleared and redrawn around it, else the line lands inside a half-drawn bar."""

    def msg(self, message: str) -> None:
        from tqdm import tqdm

        with tqdm.external_write_mode(file=self._file):
            super().msg(message)

    log = debug = info = warn = warning = err = error = critical = exception = fatal = failure = msg


def configure_logging(settings: LoggingSettings | None = None, *, level: str | None = None) -> None:
    settings = settings or LoggingSettings()
    lvl = getattr(logging, (level or settings.level).upper())
    logging.basicConfig(stream=sys.stderr, level=lvl, format="%(message)s", force=True)
    for name in _QUIET:
        logging.getLogger(name).setLevel(max(lvl, logging.WARNING))
    try:
        import transformers

        transformers.logging.set_verbosity_error()  # type: ignore[no-untyped-call]
        transformers.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    except ImportError:  # pragma: no cover
        pass
    renderer = (
        structlog.processors.JSONRenderer()
        if settings.format == "json"
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(lvl),
        logger_factory=lambda *_: _BarSafeLogger(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
