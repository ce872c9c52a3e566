"""Document metadata as typed attributes, for :mod:`sieve._documents`: which attribute holds a
metadata key (:func:`attribute_name`), which type a value fits, and :class:`MetadataCodec`, which
turns metadata dicts into attribute columns and back. docs/integrations.md#metadata-as-attributes
is the user's account of these rules.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .errors import InvalidArgument

TYPES = ("int", "float", "string", "bool", "tags")
NEW_KEY_POLICIES = ("add", "json", "error")

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
# The filter language's keywords and the row id: never an attribute's name.
_RESERVED_WORDS = {"and", "or", "not", "in", "between", "contains", "is", "null", "true",
                   "false", "id"}
_MAX_NAME = 128


def attribute_name(key: str, reserved: Sequence[str] = ()) -> str | None:
    """The attribute that holds metadata key ``key``: the key itself when it is a valid name
    (a letter, then letters, digits and ``_``; not a filter keyword nor ``id``) and not one of
    the store's ``reserved`` attributes; otherwise ``_`` and the key escaped (``_`` as ``__``,
    a character outside ``[A-Za-z0-9]`` as ``_x`` and its UTF-8 bytes in hex), so ``id`` is
    ``_id`` and ``file-name`` is ``_file_x2dname``. None when that is over 128 characters."""
    if (_PLAIN.match(key) and len(key) <= _MAX_NAME and key.lower() not in _RESERVED_WORDS
            and key not in reserved):
        return key
    out = ["_"]
    for ch in key:
        if ch.isascii() and ch.isalnum():
            out.append(ch)
        elif ch == "_":
            out.append("__")
        else:
            out.extend("_x%02x" % b for b in ch.encode("utf-8"))
    name = "".join(out)
    return name if len(name) <= _MAX_NAME else None


def _decoded_key(name: str) -> str | None:
    """The metadata key whose escaped attribute is ``name`` (None: not an escaped name)."""
    if not name.startswith("_"):
        return None
    raw = bytearray()
    i, n = 1, len(name)
    while i < n:
        ch = name[i]
        if ch != "_":
            raw += ch.encode("ascii", "replace")
            i += 1
        elif name.startswith("__", i):
            raw += b"_"
            i += 2
        elif name.startswith("_x", i) and re.fullmatch(r"[0-9a-f]{2}", name[i + 2:i + 4]):
            raw.append(int(name[i + 2:i + 4], 16))
            i += 4
        else:
            return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def value_kind(v: Any) -> str | None:
    """The attribute type a metadata value fits, or None for a value only JSON keeps."""
    t = type(v)
    if t is str:
        return "string"
    if t is int:
        return "int" if _INT64_MIN <= v <= _INT64_MAX else None
    if t is float:
        return "float"
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "int" if _INT64_MIN <= int(v) <= _INT64_MAX else None
    if isinstance(v, (float, np.floating)):
        return "float"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)) and v and all(isinstance(x, str) for x in v):
        return "tags"
    return None


def _fit(v: Any, kind: str, type_: str) -> tuple[bool, Any]:
    """``v`` (of ``kind``) as a value of an attribute of ``type_``: (fits, value)."""
    if kind == type_:
        if kind == "bool":
            return True, bool(v)
        if kind == "int":
            return True, int(v)
        if kind == "float":
            return True, float(v)
        if kind == "tags":
            return True, list(v)
        return True, str(v)
    if type_ == "float" and kind == "int" and int(float(v)) == int(v):
        return True, float(v)
    if type_ == "int" and kind == "float" and math.isfinite(v) and float(v).is_integer() \
            and _INT64_MIN <= int(v) <= _INT64_MAX:
        return True, int(v)
    return False, None


def _json_value(v: Any, where: str) -> Any:
    """``v`` as JSON can hold it (numpy scalars and arrays as Python's), else an error."""
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    try:
        json.dumps(v, allow_nan=True)
    except (TypeError, ValueError) as e:
        raise InvalidArgument("%s: %s cannot be stored: metadata values are str, int, float, "
                              "bool, lists of strings or JSON values (%s)"
                              % (where, type(v).__name__, e)) from None
    return v


class UnfilteredMetadata(UserWarning):
    """A metadata value was stored beside its document but not in its key's attribute (its
    type does not fit), so filters on that key do not see it."""


def _kind_name(kind: str) -> str:
    return "int or float" if kind == "number" else kind


class MetadataCodec:
    """Metadata dicts to attribute columns and back, for one collection's schema.

    ``types``: the metadata attributes, ``{attribute: type}`` (every attribute of the
    collection but the store's ``reserved`` ones). ``new_keys``: what a key without an attribute
    becomes: ``"add"`` an attribute of the type of its values (a schema change,
    ``Collection.add_attribute``), ``"json"`` a value in the JSON attribute (kept, not
    filterable), ``"error"`` an InvalidArgument. A value of a filterable type that does not
    fit its key's attribute (``"x"`` for an int attribute) goes into the JSON attribute for
    that document, with an :class:`UnfilteredMetadata` warning (once per key and type); with
    ``strict`` it is an InvalidArgument.
    """

    def __init__(self, reserved: Sequence[str], extra_attribute: str, new_keys: str = "add",
                 strict: bool = False) -> None:
        if new_keys not in NEW_KEY_POLICIES:
            raise InvalidArgument("new_metadata_keys must be one of %s, got %r"
                                  % (", ".join(NEW_KEY_POLICIES), new_keys))
        self.reserved = tuple(reserved)
        self.extra_attribute = extra_attribute
        self.new_keys = new_keys
        self.strict = bool(strict)
        self.types: dict[str, str] = {}
        self._warned: set[tuple[str, str]] = set()
        self.known: set[str] = set(self.reserved) | {"id", "vector"}
        self._keys: dict[str, str] = {}  # metadata key -> attribute, for the attributes there are

    def sync(self, attributes: Mapping[str, str]) -> None:
        """Takes the collection's schema ``{attribute: type}`` (readers in other threads see
        the old one or the new one)."""
        types = {a: t for a, t in attributes.items() if a not in self.reserved}
        keys = {}
        for a in types:
            key = _decoded_key(a)
            if key is None or attribute_name(key, self.reserved) != a:
                key = a  # an attribute made outside the store: its name is its key
            keys[key] = a
        self.known = set(types) | set(self.reserved) | {"id", "vector"}
        self._keys = keys
        self.types = types

    def attribute_of(self, key: str) -> str | None:
        """The attribute holding metadata key ``key`` now (None: there is none)."""
        a = self._keys.get(key)
        if a is not None:
            return a
        a = attribute_name(key, self.reserved)
        return a if a in self.types else None

    def key_of(self, attribute: str) -> str:
        for k, a in self._keys.items():
            if a == attribute:
                return k
        return attribute

    def _resolver(self) -> Callable[[Any, int], tuple[str | None, str | None]]:
        """key -> (its attribute now or None, the attribute it would get), once per key."""
        cache: dict[str, tuple[str | None, str | None]] = {}

        def resolve(key: Any, i: int) -> tuple[str | None, str | None]:
            r = cache.get(key)
            if r is None:
                if not isinstance(key, str):
                    raise InvalidArgument("metadata of document %d: key %r is not a string"
                                          % (i, key))
                r = cache[key] = (self.attribute_of(key), attribute_name(key, self.reserved))
            return r

        return resolve

    def plan(self, metadatas: Sequence[Mapping[str, Any]]) -> dict[str, str]:
        """The attributes ``encode`` would need added for ``metadatas``: ``{attribute: type}``
        (empty unless ``new_keys="add"``), each of the type most of the key's values in
        ``metadatas`` have (ints and floats together: float; a tie: the type seen first).
        Raises InvalidArgument where ``new_keys="error"`` meets a new key, or (``strict``)
        where one batch gives a new key values of types no one attribute holds."""
        resolve = self._resolver()
        # attribute -> (key, {type: [values, first document]}) of the keys without one
        seen: dict[str, tuple[str, dict[str, list[int]]]] = {}
        for i, md in enumerate(metadatas):
            for key, v in md.items():
                have, a = resolve(key, i)
                if have is not None or a is None:
                    continue
                kind = value_kind(v)
                if kind is None:
                    continue
                if self.new_keys == "error":
                    raise InvalidArgument(
                        "metadata of document %d: key %r has no attribute in the collection "
                        "(its metadata attributes: %s), and new_metadata_keys='error'"
                        % (i, key, ", ".join(sorted(self._keys)) or "none"))
                if self.new_keys == "json":
                    continue
                kinds = seen.setdefault(a, (key, {}))[1]
                if kind in ("int", "float"):
                    kind = "number"
                count = kinds.get(kind)
                if count is None:
                    if kinds and self.strict:
                        other, (_, first) = next(iter(kinds.items()))
                        raise InvalidArgument(
                            "metadata key %r: values of type %s (document %d) and %s (document "
                            "%d); one attribute holds one type (declare it in metadata_schema, "
                            "or let strict_metadata_types=False keep the others unfiltered)"
                            % (key, _kind_name(other), first, _kind_name(kind), i))
                    kinds[kind] = [1, i]
                else:
                    count[0] += 1
        out = {}
        for a, (key, kinds) in seen.items():
            kind = max(kinds, key=lambda k: (kinds[k][0], -kinds[k][1]))
            if kind == "number":
                floats = any(value_kind(md.get(key)) == "float" for md in metadatas)
                kind = "float" if floats else "int"
            out[a] = kind
        return out

    def encode(self, metadatas: Sequence[Mapping[str, Any]]
               ) -> tuple[dict[str, list[Any]], list[str | None]]:
        """``metadatas`` as ``({attribute: column}, extra)``: a column per metadata attribute
        of ``types`` that any document fills (None where a document has no value) and, per
        document, the JSON of what no attribute holds (None when nothing)."""
        resolve = self._resolver()
        n = len(metadatas)
        columns: dict[str, list[Any]] = {}
        extra: list[str | None] = [None] * n
        for i, md in enumerate(metadatas):
            rest: dict[str, Any] = {}
            for key, v in md.items():
                a = resolve(key, i)[0]
                kind = value_kind(v)
                if a is None or kind is None:
                    rest[key] = _json_value(v, "metadata %r of document %d" % (key, i))
                    continue
                ok, value = _fit(v, kind, self.types[a])
                if not ok:
                    if self.strict:
                        raise InvalidArgument(
                            "metadata %r of document %d: %r (%s) does not fit attribute %r "
                            "(%s); declare the type in metadata_schema, or let "
                            "strict_metadata_types=False keep such values unfiltered"
                            % (key, i, v, kind, a, self.types[a]))
                    if (key, kind) not in self._warned:
                        self._warned.add((key, kind))
                        warnings.warn(
                            "metadata %r: value %r (%s, document %d) does not fit attribute "
                            "%r (%s); such values are kept with the document but filters on "
                            "the key do not see them" % (key, v, kind, i, a, self.types[a]),
                            UnfilteredMetadata, stacklevel=5)
                    rest[key] = _json_value(v, "metadata %r of document %d" % (key, i))
                    continue
                col = columns.get(a)
                if col is None:
                    col = columns[a] = [None] * n
                col[i] = value
            if rest:
                extra[i] = json.dumps(rest, ensure_ascii=False, allow_nan=True)
        return columns, extra

    def decode(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """The metadata of a stored row (a dict of its attributes)."""
        md: dict[str, Any] = {}
        for key, a in self._keys.items():
            v = row.get(a)
            if v is not None:
                md[key] = v
        blob = row.get(self.extra_attribute)
        if blob:
            md.update(json.loads(blob))
        return md
