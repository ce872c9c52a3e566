"""Conditions on documents' metadata, for :mod:`sieve.langchain` and :mod:`sieve.llama_index`:
the frameworks' filters are parsed into these and rendered as Sieve filter text against a
:class:`sieve._metadata.MetadataCodec` (the attribute and type of each key). The semantics are
docs/integrations.md#filters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterator

from ._metadata import MetadataCodec, value_kind
from .errors import InvalidArgument, NotSupported


def quote(s: str) -> str:
    """A filter-language string literal."""
    return "'" + str(s).replace("'", "''") + "'"


class Cond:
    """A condition. Rendering pushes every negation down to the tests, where a document without
    the key (its attribute null) is decided as the frameworks' own in-memory filters decide it:
    it fails a positive test and passes the negated one ("!=", "not in"), two-valued, whatever
    the nesting."""


@dataclass
class All(Cond):
    parts: list[Cond]


@dataclass
class Any_(Cond):
    parts: list[Cond]


@dataclass
class Not(Cond):
    part: Cond


@dataclass
class Test(Cond):
    """``key op value``. ops: eq, gt, gte, lt, lte (a scalar; eq on tags: holds it); in (a
    list: equal to one, or on tags holds one); any, all (a list: tags holding one / every
    one); between (lo, hi); contains (tags holding it); exists (a non-null value; empty lists
    are stored null); empty (null, empty list or empty string). ``name`` is the operator as
    the user wrote it, for messages."""

    key: str
    op: str
    value: Any
    name: str
    # A string field of the store's that the key names when no metadata attribute has it.
    attribute: str | None = None


@dataclass
class Raw(Cond):
    """Filter text as is (two-valued on every row: never negated over a null)."""

    text: str


@dataclass
class Const(Cond):
    value: bool


_SQL_OPS = {"eq": "=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def tests(c: Cond) -> Iterator[Test]:
    if isinstance(c, Test):
        yield c
    elif isinstance(c, Not):
        yield from tests(c.part)
    elif isinstance(c, (All, Any_)):
        for p in c.parts:
            yield from tests(p)


class _Renderer:
    def __init__(self, codec: MetadataCodec) -> None:
        self.codec = codec

    def render(self, c: Cond, neg: bool) -> str | bool:
        if isinstance(c, Const):
            return c.value != neg
        if isinstance(c, Not):
            return self.render(c.part, not neg)
        if isinstance(c, Raw):
            return "NOT (%s)" % c.text if neg else "(%s)" % c.text
        if isinstance(c, (All, Any_)):
            conj = isinstance(c, All) != neg
            parts = [self.render(p, neg) for p in c.parts]
            return _join(parts, conj)
        assert isinstance(c, Test)
        return self.test(c, neg)

    def test(self, t: Test, neg: bool) -> str | bool:
        a = self.codec.attribute_of(t.key)
        type_ = self.codec.types.get(a) if a is not None else None
        if a is None and t.attribute is not None:
            a, type_ = t.attribute, "string"
        where = "filter on %r (%s)" % (t.key, t.name)
        if a is None:
            _check_values(t, where)
            # No document has the key as an attribute: every document lacks it.
            if t.op == "exists":
                return (not t.value) != neg
            return (t.op == "empty") != neg
        if t.op == "exists":
            if not isinstance(t.value, bool):
                raise InvalidArgument("%s: expects true or false, got %r" % (where, t.value))
            return "%s IS %sNULL" % (a, "" if t.value == neg else "NOT ")
        if t.op == "empty":
            text = "%s IS NULL" % a
            if type_ == "string":
                text = "(%s IS NULL OR %s = '')" % (a, a)
            return "NOT (%s)" % text if neg else text
        positive = self.positive(t, a, type_, where)
        if positive is True or positive is False:
            return positive != neg
        if not neg:
            return positive
        return "(%s IS NULL OR NOT (%s))" % (a, positive)

    def positive(self, t: Test, a: str, type_: str, where: str) -> str | bool:
        op, v = t.op, t.value
        if op in ("any", "all", "contains") and type_ != "tags":
            raise NotSupported("%s: tests a list's members; %r is a %s attribute (lists of "
                               "strings are tags attributes)" % (where, t.key, type_))
        if op in ("in", "any", "all"):
            values = _list(v, where)
            if not values:
                return "%s IS NOT NULL" % a if op == "all" else False
            if type_ == "tags":
                return _join(["%s CONTAINS %s" % (a, _literal(x, "string", where))
                              for x in dict.fromkeys(values)], op == "all")
            lits = [_literal(x, type_, where) for x in values]
            return "%s IN (%s)" % (a, ", ".join(dict.fromkeys(lits)))
        if op == "between":
            pair = _list(v, where)
            if len(pair) != 2:
                raise InvalidArgument("%s: expects [low, high], got %r" % (where, v))
            if type_ not in ("int", "float"):
                raise InvalidArgument("%s: applies to numbers; %r is a %s attribute"
                                      % (where, t.key, type_))
            return "%s BETWEEN %s AND %s" % (a, _literal(pair[0], type_, where),
                                            _literal(pair[1], type_, where))
        if type_ == "tags" and op in ("eq", "contains"):
            return "%s CONTAINS %s" % (a, _literal(v, "string", where))
        if op in _SQL_OPS:
            if op != "eq" and type_ not in ("int", "float"):
                raise InvalidArgument("%s: applies to numbers; %r is a %s attribute"
                                      % (where, t.key, type_))
            return "%s %s %s" % (a, _SQL_OPS[op], _literal(v, type_, where))
        raise InvalidArgument("%s: %r is a %s attribute" % (where, t.key, type_))


def _check_values(t: Test, where: str) -> None:
    """The checks a value gets without an attribute to check it against."""
    values = _list(t.value, where) if t.op in ("in", "any", "all", "between") else [t.value]
    for v in values:
        if t.op == "exists":
            if not isinstance(v, bool):
                raise InvalidArgument("%s: expects true or false, got %r" % (where, v))
        elif t.op != "empty" and value_kind(v) not in ("bool", "int", "float", "string"):
            raise InvalidArgument("%s: %r is not a str, int, float or bool" % (where, v))


def _list(v: Any, where: str) -> list[Any]:
    if isinstance(v, (list, tuple)):
        return list(v)
    raise InvalidArgument("%s: expects a list, got %r" % (where, v))


def _literal(v: Any, type_: str, where: str) -> str:
    kind = value_kind(v)
    if type_ == "string":
        if kind != "string":
            raise InvalidArgument("%s: the attribute holds strings, got %r" % (where, v))
        return quote(v)
    if type_ == "bool":
        if kind != "bool":
            raise InvalidArgument("%s: the attribute holds true/false, got %r" % (where, v))
        return "true" if v else "false"
    if type_ in ("int", "float"):
        if kind == "int":
            return str(int(v))
        if kind == "float" and math.isfinite(v):
            return repr(float(v))
        raise InvalidArgument("%s: the attribute holds numbers, got %r" % (where, v))
    raise InvalidArgument("%s: the attribute is %s" % (where, type_))


def _join(parts: list[str | bool], conj: bool) -> str | bool:
    """AND (conj) or OR of rendered parts, constants folded."""
    texts = []
    for p in parts:
        if p is True or p is False:
            if p != conj:
                return p  # false in an AND, true in an OR
            continue
        texts.append(p)
    if not texts:
        return conj
    if len(texts) == 1:
        return texts[0]
    return "(" + (" AND " if conj else " OR ").join(texts) + ")"


def render(cond: Cond, codec: MetadataCodec) -> str | bool:
    """``cond`` as Sieve filter text, or True / False when every / no document passes."""
    return _Renderer(codec).render(cond, False)
