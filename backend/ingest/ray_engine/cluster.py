"""Connecting the driver to Ray: a cluster's address, or a Ray started on this machine.

Nothing is downloaded or reported at run time: usage statistics are off
(``RAY_USAGE_STATS_ENABLED=0``, set before Ray is imported), the dashboard is not started, and no
``runtime_env`` is used (every node runs the same installed code, as ``rag`` itself does). Ray
Data's progress bars and per-run log lines stay off stdout, which ``--json`` keeps for its summary.
"""

from __future__ import annotations

import logging
import os
import socket
from dataclasses import dataclass
from typing import Any

import structlog

from backend.common.errors import ConfigError

log = structlog.get_logger(__name__)

#: what `pip install` adds for this engine (pyproject's optional extra)
EXTRA = "oracle-rag-runtime[ray]"
INSTALL_HINT = f"pip install -e '.[ray]' (the optional extra {EXTRA}, in `make setup-test`)"


class RayNotInstalled(ConfigError):
    """``--engine ray`` without the ``ray`` extra installed."""

    code = "ray_not_installed"


def require_ray() -> Any:
    """The ``ray`` module, or ``RayNotInstalled`` naming the extra to install."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
        import ray.data  # noqa: F401 - the extra is ray[data]; a bare ray lacks pandas/pyarrow
    except ImportError as exc:
        raise RayNotInstalled(f"--engine ray needs Ray Data, which is not installed ({exc}); install it with "
                              f"{INSTALL_HINT}, or leave out --engine to ingest in one process") from exc
    return ray


@dataclass
class Connection:
    """The driver's link to Ray. ``close`` disconnects when ``connect`` connected (and so stops the
    Ray it started on this machine); a cluster joined by address keeps running."""

    address: str | None
    owned: bool
    cpus: int

    def close(self) -> None:
        if self.owned:
            import ray

            ray.shutdown()


def connect(address: str | None, *, num_cpus: int | None = None) -> Connection:
    """Join the cluster at ``address`` (``auto``: the one ``ray start`` runs on this machine), or
    start Ray on this machine with ``num_cpus`` CPUs (default: every core) when ``address`` is None.
    A process already connected (a test, a notebook) keeps its connection."""
    ray = require_ray()
    started = False
    if not ray.is_initialized():
        if address is not None:
            check_reachable(address)
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False,
                                   "namespace": "rag-ingest"}
        if address is None:
            options["num_cpus"] = num_cpus
        try:
            ray.init(address=address, **options)
        except ConnectionError as exc:
            raise ConfigError(f"--address {address}: no Ray cluster answers there ({exc}); start one with "
                              "`ray start --head` or leave out --address to start Ray on this machine") from exc
        started = True
    _quiet_ray_data()
    cpus = int(ray.cluster_resources().get("CPU", 0))
    if cpus < 1:
        raise ConfigError(f"the Ray cluster at {address or 'this machine'} has no CPU to run the ingest stages on")
    log.info("ingest.ray_connected", address=address or "local", cpus=cpus, nodes=len(ray.nodes()),
             connected_here=started)
    return Connection(address, started, cpus)


#: how long the address check waits for a TCP answer (Ray itself retries an unreachable GCS for minutes)
REACH_TIMEOUT_S = 5.0


def check_reachable(address: str, timeout_s: float = REACH_TIMEOUT_S) -> None:
    """``ConfigError`` at once when nothing accepts a connection at ``HOST:PORT`` (``auto`` and
    ``ray://`` addresses are Ray's to resolve)."""
    host, sep, port = address.rpartition(":")
    if address == "auto" or address.startswith("ray://"):
        return
    if not sep or not host or not port.isdigit():
        raise ConfigError(f"--address {address!r}: expected HOST:PORT of a Ray cluster's head (port 6379 by "
                          "default), `auto` for the one `ray start` runs on this machine, or ray://HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise ConfigError(f"--address {address}: no Ray cluster answers there ({exc.strerror or exc}); start one "
                          "with `ray start --head`, or leave out --address to start Ray on this machine") from exc


def _quiet_ray_data() -> None:
    """No progress bars and no per-dataset INFO lines from Ray Data in this process."""
    from ray.data import DataContext

    context = DataContext.get_current()
    context.enable_progress_bars = False
    context.enable_operator_progress_bars = False
    context.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    logging.getLogger("ray.data._internal.progress").setLevel(logging.ERROR)  # "progress bars disabled"
