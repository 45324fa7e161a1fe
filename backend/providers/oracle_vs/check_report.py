"""What ``rag oracle check`` answers: one ``Check`` per question (pass, warn, fail or skip, what it
covers, what to do), the ``Report`` that gathers them (its JSON and its exit status), and the table
``render`` prints."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Literal, Protocol

if TYPE_CHECKING:
    from backend.common.config import OracleSettings

Status = Literal["pass", "warn", "fail", "skip"]


@dataclass
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""
    covers: str = ""
    required: bool = True
    plan: list[str] = field(default_factory=list)
    statement: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Report:
    where: str
    user: str
    server_version: str
    version: str | None
    checks: list[Check]

    @property
    def ok(self) -> bool:
        return not any(c.status == "fail" and c.required for c in self.checks)

    def as_dict(self) -> dict[str, Any]:
        return {"database": self.where, "user": self.user, "server_version": self.server_version,
                "version": self.version, "ok": self.ok, "checks": [c.as_dict() for c in self.checks]}


def message(exc: BaseException) -> str:
    arg = exc.args[0] if exc.args else exc
    return str(getattr(arg, "message", arg)).splitlines()[0]


@dataclass
class SampleVersion:
    """The version the index and plan checks are asked about (the latest, or ``--version``)."""

    name: str
    dimension: int
    distance: str
    index_type: str
    rows: int = 0
    #: the version's embedding model stamp (the parity check is for it)
    model: str = ""
    #: ``float32`` or ``int8`` (the version's stamp): the advisor's DIM_TYPE and the formula's bytes (N3)
    vector_format: str = "float32"


def render(report: Report, echo: Callable[[str], None]) -> None:
    version = f", version {report.version}" if report.version else ""
    echo(f"rag oracle check: {report.where} as {report.user or '?'} (Oracle {report.server_version or '?'}){version}")
    width = max([len(c.name) for c in report.checks] + [5])
    echo(f"{'STATUS':<6}  {'CHECK':<{width}}  {'COVERS':<8}  RESULT")
    for c in report.checks:
        status = c.status if c.required or c.status != "fail" else "warn"
        echo(f"{status:<6}  {c.name:<{width}}  {c.covers:<8}  {c.detail}")
        if c.fix and c.status != "pass":
            echo(f"{'':<6}  {'':<{width}}  {'':<8}  -> {c.fix}")
    counts = {s: sum(1 for c in report.checks if c.status == s) for s in ("pass", "warn", "fail", "skip")}
    failed = sum(1 for c in report.checks if c.status == "fail" and c.required)
    echo(f"{counts['pass']} pass, {counts['warn']} warn, {counts['fail']} fail ({failed} required), "
         f"{counts['skip']} skip: {'ready' if report.ok else 'not ready'} (exit {0 if report.ok else 1})")


class CheckSession(Protocol):
    """What the check groups (``plan_checks``, ``model_checks``) ask of the first-contact session
    (``first_contact.FirstContact``): its connection and settings, statements, and the report."""

    con: Any
    settings: OracleSettings
    max_question_chars: int
    run_id: str

    def rows(self, statement: str, binds: dict[str, Any] | None = None) -> list[tuple[Any, ...]]: ...

    def execute(self, statement: str, binds: dict[str, Any] | None = None) -> None: ...

    def try_execute(self, statement: str, binds: dict[str, Any] | None = None) -> str: ...

    def try_rows(self, statement: str, binds: dict[str, Any] | None = None) -> tuple[list[tuple[Any, ...]] | None, str]: ...

    def add(self, *args: Any, **kwargs: Any) -> Check: ...
