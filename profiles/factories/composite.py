"""`CompositeProfileFactory`: ask several factories in order, take the first answer or merge them.

Typical use: a dataset knows most customers, an LLM factory invents the rest (`first`); or a
dataset supplies names and goals while another factory supplies constraints and examples
(`merge`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..context import Resolved
from ..errors import FactoryError, ProfilesError
from ..fields import PROFILE_FIELDS
from ..profile_config import ProfileConfig
from .base import ProfileFactory

if TYPE_CHECKING:
    from ..profile import DefaultProfile, Profile

__all__ = ["CompositeProfileFactory", "merge_profiles"]

_MODES = ("first", "merge")

#: Getter of each field on a `Profile` that is not a `DefaultProfile`.
_GETTERS = {
    "name": "get_name",
    "role": "get_role",
    "goal": "get_goal",
    "retry_goal": "get_retry_goal",
    "desc": "get_description",
    "constraints": "get_constraints",
    "retry_constraints": "get_retry_constraints",
    "expand_prompt": "get_expand_prompt",
    "examples": "get_examples",
    "language": "get_language",
    "model": "get_model",
    "avatar": "get_avatar",
}


class CompositeProfileFactory(ProfileFactory):
    """Combines factories, asked in the order given.

    `mode="first"`: the first non-None profile is the answer, as that factory made it.

    `mode="merge"`: every factory is asked; the result takes each field from the first profile
    where it is set, so a later factory only fills what the earlier ones left empty. Empty means
    None, an empty text or an empty list; a list is taken whole from one profile, never joined.
    Own templates (per prompt kind) and bound variables (per name) follow the same rule; tools and
    template folders come whole from the first profile that has any; the id is the first
    profile's. Each field keeps the provenance of the profile it came from, secrets stay
    secret, and a value that was data in its profile (a dataset cell) stays data. The merged
    persona is validated: if no factory supplied a name and a role, that is a `ConfigError`.

    `create_profiles()` without ids lists the profiles of the first factory, which decides which
    profiles exist; in `merge` mode each is completed by the other factories for its id.
    """

    def __init__(self, factories: Sequence[ProfileFactory], mode: Literal["first", "merge"] = "first") -> None:
        if mode not in _MODES:
            raise FactoryError(f"mode must be 'first' or 'merge', got {mode!r}")
        self.factories = tuple(factories)
        if not self.factories:
            raise FactoryError("a composite factory needs at least one factory")
        for index, factory in enumerate(self.factories):
            if not callable(getattr(factory, "create_profile", None)):
                raise FactoryError(f"factory #{index + 1} ({type(factory).__name__}) has no create_profile()")
        self.mode = mode

    def create_profile(
        self,
        profile_id: Any = None,
        *,
        name: str | None = None,
        role: str | None = None,
        goal: str | None = None,
        language: str | None = None,
        model: str | None = None,
        **options: Any,
    ) -> Profile | None:
        """The first factory's non-None profile (`first`), or all of them merged (`merge`)."""
        options = {"name": name, "role": role, "goal": goal, "language": language, "model": model, **options}
        found: list[Profile] = []
        for index, factory in enumerate(self.factories):
            profile = self._ask(index, factory, profile_id, options)
            if profile is None:
                continue
            if self.mode == "first":
                return profile
            found.append(profile)
        return merge_profiles(found, profile_id) if found else None

    def create_profiles(self, profile_ids: Iterable[Any] | None = None, **options: Any) -> Iterator[Profile]:
        """Profiles for `profile_ids`; without ids, those the first factory lists (see the class)."""
        if profile_ids is not None:
            return self._each(profile_ids, options)
        listed = self.factories[0].create_profiles(**options)
        if self.mode == "first" or len(self.factories) == 1:
            return listed
        return self._completed(listed, options)

    def _completed(self, listed: Iterable[Profile], options: dict[str, Any]) -> Iterator[Profile]:
        for first in listed:
            profile_id = getattr(first, "profile_id", None)
            found = [first]
            for index, factory in enumerate(self.factories[1:], start=1):
                profile = self._ask(index, factory, profile_id, options)
                if profile is not None:
                    found.append(profile)
            yield merge_profiles(found, profile_id)

    @staticmethod
    def _ask(index: int, factory: ProfileFactory, profile_id: Any, options: dict[str, Any]) -> Profile | None:
        try:
            return factory.create_profile(profile_id, **options)
        except ProfilesError:
            raise
        except Exception as exc:
            raise FactoryError(
                f"factory #{index + 1} ({type(factory).__name__}) failed for profile {profile_id!r}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, tuple)) and len(value) == 0)


def _parts(profile: Profile) -> tuple[dict[str, Resolved], set[str], dict[str, Any], dict[str, Resolved]]:
    """A profile's fields with provenance, its literal fields, own templates and bound variables,
    each variable with its source and whether it is a secret."""
    resolved = getattr(profile, "resolved", None)
    if resolved is not None:
        default: DefaultProfile = profile  # type: ignore[assignment]
        from ..rendering.renderer import has_template_syntax

        literal = {
            name
            for name, item in resolved.items()
            if name not in default.field_templates and isinstance(item.value, str) and has_template_syntax(item.value)
        }
        sourced = getattr(default, "resolved_variables", {})
        bound = {name: sourced.get(name) or Resolved(value, "default") for name, value in default.bound.items()}
        return dict(resolved), literal, dict(default.templates), bound
    fields = {}
    for name, getter in _GETTERS.items():
        method = getattr(profile, getter, None)
        value = method() if callable(method) else None
        fields[name] = Resolved(tuple(value) if isinstance(value, list) else value, f"factory:{type(profile).__name__}")
    return fields, set(), {}, {}


def merge_profiles(profiles: Sequence[Profile], profile_id: Any = None) -> Profile:
    """Merge profiles by the rule of `CompositeProfileFactory(mode="merge")`; one is returned as is."""
    from ..messages import DEFAULT_LAYOUT
    from ..profile import build_profile

    if len(profiles) == 1:
        return profiles[0]
    resolved: dict[str, Resolved] = {}
    literal: set[str] = set()
    templates: dict[str, Any] = {}
    variables: dict[str, Resolved] = {}
    for profile in profiles:
        fields, data_fields, own_templates, bound = _parts(profile)
        for name in PROFILE_FIELDS:
            item = fields.get(name)
            if name not in resolved and item is not None and not _empty(item.value):
                resolved[name] = item
                if name in data_fields:
                    literal.add(name)
        for kind, template in own_templates.items():
            templates.setdefault(kind, template)
        for key, value in bound.items():
            variables.setdefault(key, value)
    for name in PROFILE_FIELDS:
        resolved.setdefault(name, Resolved(None, "unset"))
    first_id = getattr(profiles[0], "profile_id", None)
    # tools, the resources rule and template folders come whole from the first profile that has them
    tools = next((tuple(p.tools) for p in profiles if getattr(p, "tools", ())), ())
    requires = next((True for p in profiles if getattr(p, "requires_resources", False)), False)
    allowed = sorted({name for p in profiles for name in getattr(p, "allow_secrets", ())})
    roots = next((_user_roots(p) for p in profiles if _user_roots(p)), ())
    config = ProfileConfig(
        name=resolved["name"].value,
        role=resolved["role"].value,
        templates=templates,
        # a secret variable's value stays out of the persona; it comes in below, still a secret
        variables={key: item.value for key, item in variables.items() if not item.secret},
        tools=tools,
        requires_resources=requires,
        allow_secrets=allowed,
    )
    profile_id = first_id if first_id is not None else profile_id
    made = build_profile(config, profile_id, resolved, template_roots=roots, literal=literal, variables=variables)
    # what turns prompts into messages and requests comes whole from the first profile that has it
    carried: dict[str, Any] = {}
    for name in ("inputs", "settings", "settings_extra", "roles", "metadata"):
        found = next((getattr(p, name) for p in profiles if getattr(p, name, None)), None)
        if found:
            carried[name] = found
    output = next((p.output_schema for p in profiles if getattr(p, "output_schema", None) is not None), None)
    layout = next((p.layout for p in profiles if getattr(p, "layout", DEFAULT_LAYOUT) != DEFAULT_LAYOUT), None)
    if output is not None:
        carried["output_schema"] = output
    if layout is not None:
        carried["layout"] = layout
    return replace(made, **carried) if carried else made


def _user_roots(profile: Profile) -> tuple[Path, ...]:
    """The template folders a profile searches before the bundled ones."""
    renderer = getattr(profile, "renderer", None)
    roots = tuple(getattr(renderer, "roots", ()))
    return roots[:-1]
