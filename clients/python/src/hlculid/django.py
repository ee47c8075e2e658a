"""hlculid columns for Django (4.2+, PostgreSQL with psycopg 3; db_default needs Django 5.0+):
`pip install "hlculid[django]"`.

    from hlculid import Hlculid
    from hlculid.django import HlculidField, HlculidGenerate

    class Event(models.Model):
        id = HlculidField(primary_key=True, db_default=HlculidGenerate())

    Event.objects.filter(id__in_range=(t1, t2))  # a time window: id <@ tstzrange(t1, t2, '[)')

The column is `hlculid` in migrations; values are Hlculid (a uuid.UUID subclass) and lookups take
an Hlculid, a uuid.UUID or a string in any text form the server accepts. A parameter goes to the
server as the canonical text without a type of its own (Django's psycopg 3 cursors, client- or
server-side binding), so the server reads it as an hlculid: `id = %s` compares hlculid with
hlculid and uses the key's index (time windows: the lookup `in_range`, `id <@ tstzrange(%s, %s)`). Forms and the admin show and read the
canonical 12-4-4-12 text.
"""

import uuid

from django import forms
from django.core import exceptions
from django.db import models
from hlculid import as_hlculid


class HlculidFormField(forms.CharField):
    """A text input that reads any accepted form of an id and shows the canonical one."""

    default_error_messages = {"invalid": "Enter a valid hlculid."}

    def prepare_value(self, value):
        if isinstance(value, uuid.UUID):
            return str(as_hlculid(value))
        return value

    def to_python(self, value):
        value = super().to_python(value)
        if value in self.empty_values:
            return None
        try:
            return as_hlculid(value)
        except (TypeError, ValueError):
            raise exceptions.ValidationError(self.error_messages["invalid"], code="invalid")


class HlculidField(models.Field):
    """An `hlculid` column; Python values are Hlculid."""

    description = "hlculid (128-bit time-ordered id)"
    empty_strings_allowed = False
    default_error_messages = {"invalid": "\u201c%(value)s\u201d is not a valid hlculid."}

    def get_internal_type(self):
        return "HlculidField"

    def db_type(self, connection):
        return "hlculid"

    def to_python(self, value):
        if value is None:
            return None
        try:
            return as_hlculid(value)
        except (TypeError, ValueError):
            raise exceptions.ValidationError(self.error_messages["invalid"], code="invalid",
                                             params={"value": value})

    def from_db_value(self, value, expression, connection):
        # text from a plain connection; already an Hlculid where hlculid.register_psycopg
        # was applied to the connection
        return None if value is None else as_hlculid(value)

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        return self.to_python(value)

    def get_db_prep_value(self, value, connection, prepared=False):
        if not prepared:
            value = self.get_prep_value(value)
        # the canonical text: psycopg sends a str untyped, so the server reads it as an hlculid
        # (an Hlculid itself would go as a uuid, which the server's cast refuses for ids that
        # look like random uuids)
        return None if value is None else str(value)

    def value_to_string(self, obj):
        value = self.value_from_object(obj)
        return "" if value is None else str(value)

    def formfield(self, **kwargs):
        return super().formfield(**{"form_class": HlculidFormField, **kwargs})


class HlculidGenerate(models.Func):
    """hlculid_generate(), for db_default (Django 5.0+) and queries."""

    function = "hlculid_generate"
    arity = 0
    output_field = HlculidField()


@HlculidField.register_lookup
class InRange(models.Lookup):
    """`id__in_range=(start, end)` or `(start, end, bounds)`: `id <@ tstzrange(start, end, bounds)`,
    a time window the planner estimates from the column's statistics and turns into index
    conditions on the key (bounds '[)' by default: start included, end not). Prefer it to
    `id__range=(Hlculid.min_of(t1), Hlculid.max_of(t2))`, which the planner misestimates."""

    lookup_name = "in_range"
    prepare_rhs = False

    def get_prep_lookup(self):
        rhs = tuple(self.rhs)
        if len(rhs) == 2:
            rhs += ("[)",)
        if len(rhs) != 3 or rhs[2] not in ("[)", "[]", "(]", "()"):
            raise ValueError("in_range takes (start, end) or (start, end, bounds), bounds one of [) [] (] ()")
        return rhs

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        return f"{lhs} <@ tstzrange(%s, %s, %s)", [*lhs_params, *self.rhs]
