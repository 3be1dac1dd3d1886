"""Row plans: the rows of one batch that share a shape, made without a profile each.

Most rows of a batch differ only in their cells: the base persona, the deployment, the question
and the templates are the same for all of them. Building a whole profile per row (a persona model
copied with the row's values, its fields resolved, its field templates compiled, a render plan
per prompt kind worked out) repeats that shared work for every row. A row plan does it once per
*shape* instead: the persona fields and variables a row sets, and its language and model (which
choose the templates). The first row of each shape is made the general way, through
`DatasetProfileFactory.make` and the profile's own renders; its profile says which value each
template variable takes (a constant of the base persona, a default, the question, or one of the
row's cells) and which field templates render before each prompt. Every later row of that shape
fills those places with its own cells and renders the same compiled templates with the same
renderer, so its prompts are the ones its profile would have rendered.

The plan is a shortcut, never a second set of rules: it is used only where the general way is
known to agree.

* Only for a literal base persona (nothing looked up per profile: no dynamic field or variable,
  no store template), without declared `inputs:`, secrets, required resources or an application
  recording traces, or for no base at all; any other batch makes every row the general way.
  Without a base, a row whose variable is a mapping goes the general way, since the persona
  model reads one holding `key` as a dynamic entry.
* A shape is used only once its first row, made both ways, gave the same bytes; a shape whose
  first row failed, or differed, sends its rows the general way.
* A row whose cells cannot be read, whose values are not plain text (the persona model then
  checks them and words the error), or whose render fails in any way is made again the general
  way, which reports exactly what it reports without the plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .factories._rows import RawRow
    from .factories.dataset import DatasetProfileFactory
    from .profile import DefaultProfile
    from .rendering.renderer import CompiledTemplate, Renderer

__all__ = ["MAX_SHAPES", "RowPlans", "RowRead"]

#: Most shapes one batch learns; rows of further shapes are made the general way. A column that
#: gives every row its own model would otherwise learn (make twice) every row.
MAX_SHAPES = 64

#: The prompt kinds a batch renders, with the inputs `format_system_prompt(question)` and
#: `format_user_prompt(question)` pass along with the question.
_KIND_INPUTS: dict[str, dict[str, Any]] = {
    "system": {
        "most_recent_memories": None,
        "resource_prompt": None,
        "out_schema": None,
        "now_time": None,
        "is_retry_chat": False,
        "resources": None,
    },
    "user": {"most_recent_memories": None},
}

#: Where a template variable's value comes from in a row: one of its variables, one of its
#: fields, or a field template rendered earlier in the same prompt.
_VARIABLE, _FIELD, _RENDERED = 0, 1, 2


class RowRead:
    """One row as the mapping read it, with what picks its shape."""

    __slots__ = ("checked", "columns", "key", "profile_id", "values", "variables")

    def __init__(
        self,
        profile_id: Any,
        values: dict[str, Any],
        variables: dict[str, Any],
        columns: dict[str, str | None],
        checked: dict[str, Any],
    ) -> None:
        self.profile_id = profile_id
        self.values = values
        self.variables = variables
        self.columns = columns
        #: The values as the persona model holds them (list fields as tuples).
        self.checked = checked
        self.key = (tuple(values), tuple(variables), checked.get("language"), checked.get("model"))


class _Template:
    """A field template with where each variable it reads comes from."""

    __slots__ = ("compiled", "constant", "places")

    def __init__(self, compiled: CompiledTemplate, constant: dict[str, Any], places: tuple[tuple[str, int], ...]):
        self.compiled = compiled
        self.constant = constant
        self.places = places


class _Kind:
    """One prompt kind of one shape: its template, the values it reads that no row changes, and
    those a row gives; then the field templates to render first, in order."""

    __slots__ = ("compiled", "constant", "fields", "places")

    def __init__(
        self,
        compiled: CompiledTemplate,
        constant: dict[str, Any],
        places: tuple[tuple[str, int], ...],
        fields: tuple[tuple[str, Any, bool], ...],
    ) -> None:
        self.compiled = compiled
        self.constant = constant
        self.places = places
        #: (field, template or tuple of templates and texts, whether the prompt reads its text)
        self.fields = fields


class _Shape:
    """What every row of one shape shares: the renderer and each kind's plan."""

    __slots__ = ("kinds", "renderer")

    def __init__(self, renderer: Renderer, kinds: tuple[tuple[str, _Kind], ...]) -> None:
        self.renderer = renderer
        self.kinds = kinds

    def prompts(self, read: RowRead) -> dict[str, str]:
        """The row's prompts, rendered as its profile renders them; raises whatever a render raises."""
        render = self.renderer.render
        variables, checked = read.variables, read.checked
        prompts = {}
        for kind, plan in self.kinds:
            values = plan.constant.copy()
            for name, place in plan.places:
                values[name] = variables[name] if place == _VARIABLE else checked[name]
            if plan.fields:
                rendered: dict[str, Any] = {}
                for field, templates, target in plan.fields:
                    if isinstance(templates, tuple):
                        text: Any = tuple(
                            item if isinstance(item, str) else _render_field(render, item, variables, checked, rendered)
                            for item in templates
                        )
                    else:
                        text = _render_field(render, templates, variables, checked, rendered)
                    rendered[field] = text
                    if target:
                        values[field] = text
            prompts[kind] = render(plan.compiled, values).strip()
        return prompts


def _render_field(
    render: Any,
    template: _Template,
    variables: Mapping[str, Any],
    checked: Mapping[str, Any],
    rendered: Mapping[str, Any],
) -> str:
    values = template.constant.copy()
    for name, place in template.places:
        if place == _VARIABLE:
            values[name] = variables[name]
        elif place == _FIELD:
            values[name] = checked[name]
        else:
            values[name] = rendered[name]
    return render(template.compiled, values)  # type: ignore[no-any-return]


#: A shape whose rows are made the general way.
_GENERAL = object()


class RowPlans:
    """The shapes one batch has learned, for `profiles.batch`'s row maker.

    `read(raw)` reads a row's cells (None: make the row the general way); `shape(read)` is its
    shape's plan, `None` while the shape is still to learn (`learn`), or `False` for the general way.
    """

    def __init__(self, factory: DatasetProfileFactory, base: Any, question: str | None, render: bool) -> None:
        from . import tracing
        from .factories.dataset import RowResult, _checked

        self._factory = factory
        self._checked = _checked
        self._recording = tracing.recording
        #: `RowResult`, looked up once: every row makes one
        self.row_result = RowResult
        self._question = question
        self._render = render
        self._shapes: dict[tuple[Any, ...], Any] = {}
        self._base = base
        #: Rows made by a plan so far (the others were made the general way).
        self.made = 0

    @staticmethod
    def applies(base: Any) -> bool:
        """Whether rows made from `base` (the run's persona, its deployment applied) can use plans."""
        from .resolve import is_literal

        if base is None:
            return True  # each row is the whole persona, all of it the row's cells: literal
        try:
            return bool(is_literal(base) and not base.inputs and not base.requires_resources and not base.allow_secrets)
        except Exception:  # a persona this module does not know how to read: the general way
            return False

    def read(self, raw: RawRow) -> RowRead | None:
        """The row's cells and shape; None when the row goes the general way (it cannot be read,
        its values are not plain text, or traces are being recorded)."""
        cells = self._factory.cells(raw)
        if type(cells) is not tuple:  # the row's issues
            return None
        profile_id, values, variables, columns = cells
        checked = self._checked(values)
        if checked is None or self._recording():
            return None
        if self._base is None and variables and any(isinstance(value, Mapping) for value in variables.values()):
            return None  # without a base the persona model reads `{key: …}` as a dynamic variable
        return RowRead(profile_id, values, variables, columns, checked)

    def shape(self, read: RowRead) -> _Shape | bool | None:
        """The plan of the row's shape; None: not learnt yet (and there is room); False: the general way."""
        shape = self._shapes.get(read.key)
        if shape is None:
            return None if len(self._shapes) < MAX_SHAPES else False
        return False if shape is _GENERAL else shape  # type: ignore[no-any-return]

    def record(self, shape: _Shape, raw: RawRow, read: RowRead, writer: Any) -> dict[str, Any] | None:
        """The row's output record, as the general way makes it; None when a render failed (the
        general way then says how)."""
        record = self._record(shape, raw, read, writer)
        if record is not None:
            self.made += 1
        return record

    def _record(self, shape: _Shape, raw: RawRow, read: RowRead, writer: Any) -> dict[str, Any] | None:
        record: dict[str, Any] = {
            "id": read.profile_id,
            "row": raw.row,
            "persona": writer.data_of(read.values, read.variables),
        }
        if self._render:
            try:
                record["prompts"] = shape.prompts(read)
            except Exception:  # every failure is reported by the general way, in its words
                return None
        return record

    def learn(
        self, raw: RawRow, read: RowRead, profile: DefaultProfile | None, encoded: bytes | None, writer: Any
    ) -> None:
        """Learn the row's shape from the profile the general way made of it and the record it
        encoded. None for either: the row failed, and the shape's next row is learnt from instead
        (a failed row costs no more than without plans, and a shape can fail for one row's cells)."""
        from .jsonlines import dumps_line

        if profile is None or encoded is None:
            return
        shape: Any = _GENERAL
        try:
            planned = self._plan(profile, read) if self._render else _Shape(profile.renderer, ())
            record = self._record(planned, raw, read, writer)
            if record is not None and dumps_line(record) == encoded:
                shape = planned
        except Exception:  # a profile this module cannot plan for: the general way
            shape = _GENERAL
        self._shapes[read.key] = shape

    # planning ------------------------------------------------------------------------------------
    def _plan(self, profile: DefaultProfile, read: RowRead) -> _Shape:
        """The shape of `read`'s row, from the profile made of it; raises when there is nothing to plan."""
        shared = profile._base  # the persona's plan (profiles.plan), which the profile reads through to
        if profile.inputs or profile.requires_resources or shared.withheld_names or shared.dynamic:
            raise ValueError("not planned: inputs, resources, secrets or values looked up per profile")
        kinds = []
        for kind, extra in _KIND_INPUTS.items():
            inputs = {"question": self._question, **extra}
            kinds.append((kind, self._kind(profile, kind, inputs, read)))
        return _Shape(profile.renderer, tuple(kinds))

    def _kind(self, profile: DefaultProfile, kind: str, inputs: Mapping[str, Any], read: RowRead) -> _Kind:
        plan = profile.plans.get(kind) or profile._plan(kind)
        if plan.unresolved or plan.secret or plan.required or plan.from_own:
            raise ValueError("not planned: variables only a caller gives")
        constant: dict[str, Any] = {}
        places: dict[str, int] = {}
        for name, value in plan.shared.items():
            place = self._place(profile, name, read)
            if place is None:
                constant[name] = value
            else:
                places[name] = place
        passed = plan.passed
        for name, value in inputs.items():
            if value is not None and (passed is None or name in passed):
                constant[name] = value
                places.pop(name, None)
        fields = []
        rendered: set[str] = set()
        for field, templates in plan.fields:
            if isinstance(templates, tuple):
                planned: Any = tuple(
                    item if isinstance(item, str) else self._field(profile, kind, item, inputs, rendered, read)
                    for item in templates
                )
            else:
                planned = self._field(profile, kind, templates, inputs, rendered, read)
            rendered.add(field)
            target = field in plan.field_targets
            if target:
                constant.pop(field, None)
                places.pop(field, None)
            fields.append((field, planned, target))
        return _Kind(plan.compiled, constant, tuple(places.items()), tuple(fields))

    def _field(
        self,
        profile: DefaultProfile,
        kind: str,
        template: CompiledTemplate,
        inputs: Mapping[str, Any],
        rendered: set[str],
        read: RowRead,
    ) -> _Template:
        """A field template's variables, found as the profile's lookup finds them (no caller's variables)."""
        defaults = profile._base.kind_defaults(kind)
        constant: dict[str, Any] = {}
        places: list[tuple[str, int]] = []
        for name in template.declared:
            value = inputs.get(name)
            if value is not None:
                constant[name] = value
            elif name in profile.bound:
                if name in read.variables:
                    places.append((name, _VARIABLE))
                else:
                    constant[name] = profile.bound[name]
            elif name in profile.values:
                if name in rendered:
                    places.append((name, _RENDERED))
                elif self._place(profile, name, read) == _FIELD:
                    places.append((name, _FIELD))
                else:
                    constant[name] = profile.values[name]
            elif name in defaults:
                constant[name] = defaults[name]
            elif name in template.required:
                raise ValueError(f"not planned: {name!r} is given by nothing")
            # else: optional and given by nothing, so left undefined, as the profile leaves it
        return _Template(template, constant, tuple(places))

    @staticmethod
    def _place(profile: DefaultProfile, name: str, read: RowRead) -> int | None:
        """Where the value of `name` in a prompt's shared values comes from in a row of this
        shape; None: the same for every row (the base persona's, a default, the run's language)."""
        if name in profile.bound:
            return _VARIABLE if name in read.variables else None
        if name in profile.values and name in read.checked and name not in ("language", "model"):
            return _FIELD
        return None
