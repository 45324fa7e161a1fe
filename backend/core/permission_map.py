"""A source's readers as the runtime's ACL labels (pure; docs/CONNECTORS.md, "Permissions").

Why never wider: a reader the mapping does not know is *reported*, not guessed; an item none of
whose readers maps gets the mapping's ``default`` when one is set, else ``unknown`` (admins
only), and an item whose source gave no permissions at all (``readers`` None) gets ``unknown``
too. Nothing unmapped ever becomes ``public``.

Readers are the connectors' shared vocabulary: ``public``, ``everyone`` (the tenant),
``user:<name or e-mail>``, ``group:<name>``; anything else is unmapped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from backend.common.config import PermissionMapping
from backend.core.access import acl_labels

_PRINCIPAL = re.compile(r"^[a-z0-9][a-z0-9_.@+-]{0,127}$")


@dataclass(frozen=True)
class MappedReaders:
    labels: tuple[str, ...]
    unmapped: tuple[str, ...] = ()
    #: the source gave no permissions (or none mapped and no default): admins only
    unknown: bool = False


def _as_list(value: str | list[str] | None) -> list[str]:
    return [] if value is None else [value] if isinstance(value, str) else list(value)


def _reader_labels(reader: str, mapping: PermissionMapping) -> list[str]:
    if reader == "public":
        return _as_list(mapping.public)
    if reader == "everyone":
        return _as_list(mapping.everyone)
    kind, _, name = reader.partition(":")
    if kind == "group" and name:
        return _as_list(mapping.groups.get(name))
    if kind == "user" and name:
        if name in mapping.users:
            return _as_list(mapping.users[name])
        domain = name.rpartition("@")[2].lower() if "@" in name else ""
        if domain and domain in mapping.domains:
            return _as_list(mapping.domains[domain])
        if mapping.users_as_principals and _PRINCIPAL.fullmatch(name.lower()):
            return [f"user:{name.lower()}"]
    return []


def map_readers(readers: Sequence[str] | None, mapping: PermissionMapping) -> MappedReaders:
    """Pure: the ACL labels of an item whose source lists ``readers`` (None: not given)."""
    if readers is None:
        return MappedReaders(tuple(acl_labels(_as_list(mapping.unknown))), unknown=True)
    labels: list[str] = []
    unmapped: list[str] = []
    for reader in readers:
        got = _reader_labels(reader.strip(), mapping)
        if got:
            labels += got
        else:
            unmapped.append(reader)
    if labels:
        return MappedReaders(tuple(acl_labels(labels)), tuple(unmapped))
    if mapping.default is not None:
        return MappedReaders(tuple(acl_labels(_as_list(mapping.default))), tuple(unmapped))
    return MappedReaders(tuple(acl_labels(_as_list(mapping.unknown))), tuple(unmapped), unknown=True)
