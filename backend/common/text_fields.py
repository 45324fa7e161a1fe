"""A text field that must hold more than white space, for the pydantic models outside config (the
HTTP request bodies, a golden set's lines): ``Annotated[str, non_blank("question must contain text")]``."""

from __future__ import annotations

from pydantic import AfterValidator


def non_blank(message: str) -> AfterValidator:
    """A validator refusing a text that is empty or only white space with ``message`` (a value error
    on that field, as a ``field_validator`` raising it gives)."""

    def check(value: str) -> str:
        if not value.strip():
            raise ValueError(message)
        return value

    return AfterValidator(check)
