"""Source readers -> ACL labels (issue 46): mapped, reported, never widened to public."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from backend.common.config import PermissionMapping
from backend.core.permission_map import MappedReaders, map_readers

MAPPING = PermissionMapping.model_validate({
    "users": {"Dana@Corp.Example": "dana"}, "groups": {"hr-staff": ["group:hr", "user:payroll-bot"]},
    "domains": {"corp.example": "group:staff"}, "everyone": "group:staff"})


@pytest.mark.parametrize(("readers", "expected"), [
    (None, MappedReaders(("group:admins",), (), True)),
    ((), MappedReaders(("group:admins",), (), True)),
    (("public",), MappedReaders(("public",))),
    (("everyone",), MappedReaders(("group:staff",))),
    (("group:hr-staff",), MappedReaders(("group:hr", "user:payroll-bot"))),
    (("user:Dana@Corp.Example",), MappedReaders(("user:dana",))),
    (("user:lee@corp.example",), MappedReaders(("group:staff",))),          # by e-mail domain
    (("user:lee@CORP.EXAMPLE",), MappedReaders(("group:staff",))),          # domains are case-insensitive
    (("user:zed@other.example", "group:hr-staff"), MappedReaders(("group:hr", "user:payroll-bot"),
                                                                 ("user:zed@other.example",))),
    # nothing maps: admins only, never public
    (("group:payroll", "user:zed@other.example", "anonymous"),
     MappedReaders(("group:admins",), ("group:payroll", "user:zed@other.example", "anonymous"), True)),
])
def test_map_readers(readers: tuple[str, ...] | None, expected: MappedReaders) -> None:
    assert map_readers(readers, MAPPING) == expected


def test_default_and_public_and_users_as_principals() -> None:
    mapping = PermissionMapping.model_validate({"default": "group:staff", "public": None, "users_as_principals": True})
    assert map_readers(("group:x",), mapping) == MappedReaders(("group:staff",), ("group:x",))
    assert map_readers(("public",), mapping) == MappedReaders(("group:staff",), ("public",))  # public unmapped
    assert map_readers(("user:Ann@Corp.Example",), mapping) == MappedReaders(("user:ann@corp.example",))
    assert map_readers(None, mapping) == MappedReaders(("group:admins",), (), True)  # unknown is not default


def test_a_bad_label_names_its_field() -> None:
    with pytest.raises(ValidationError, match=r"groups.hr: 'HR Team' is no ACL label"):
        PermissionMapping.model_validate({"groups": {"hr": "HR Team"}})
