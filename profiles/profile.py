"""Profiles: a persona resolved for one context, immutable, that renders prompts.

A profile never reads the environment: every value was resolved when it was created, so
rendering is pure and the same profile renders the same prompt from any thread.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .context import Resolved
from .errors import RenderError
from .rendering.renderer import CompiledTemplate, Renderer, get_renderer, has_template_syntax
from .rendering.templates import PROMPT_INPUTS, PROMPT_KINDS

if TYPE_CHECKING:
    from .config import ProfileConfig

__all__ = ["DefaultProfile", "Profile", "build_profile"]


class Profile(ABC):
    """What an agent needs of its persona: identity getters and prompt rendering."""

    @abstractmethod
    def get_name(self) -> str | None: ...

    @abstractmethod
    def get_role(self) -> str | None: ...

    def get_goal(self) -> str | None:
        return None

    def get_retry_goal(self) -> str | None:
        return None

    def get_constraints(self) -> list[str] | None:
        return None

    def get_retry_constraints(self) -> list[str] | None:
        return None

    def get_description(self) -> str | None:
        return None

    def get_expand_prompt(self) -> str | None:
        return None

    def get_examples(self) -> str | None:
        return None

    def get_avatar(self) -> str | None:
        return None

    @abstractmethod
    def format_prompt(self, kind: str, *, strict: bool = False, **variables: Any) -> str:
        """Render the prompt of `kind` (`system`, `user`, `write_memory`, …)."""


_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, eq=False)
class DefaultProfile(Profile):
    """A profile made by `ProfileConfig.create_profile`; rendering never changes it."""

    profile_id: Any
    resolved: Mapping[str, Resolved]
    values: Mapping[str, Any]
    templates: Mapping[str, Any]
    bound: Mapping[str, Any]
    field_templates: Mapping[str, Any]
    renderer: Renderer = field(repr=False)

    # getters ---------------------------------------------------------------
    def get_name(self) -> str | None:
        return self.values["name"]

    def get_role(self) -> str | None:
        return self.values["role"]

    def get_goal(self) -> str | None:
        return self.values["goal"]

    def get_retry_goal(self) -> str | None:
        return self.values["retry_goal"]

    def get_constraints(self) -> list[str] | None:
        value = self.values["constraints"]
        return list(value) if value is not None else None

    def get_retry_constraints(self) -> list[str] | None:
        value = self.values["retry_constraints"]
        return list(value) if value is not None else None

    def get_description(self) -> str | None:
        return self.values["desc"]

    def get_expand_prompt(self) -> str | None:
        return self.values["expand_prompt"]

    def get_examples(self) -> str | None:
        return self.values["examples"]

    def get_avatar(self) -> str | None:
        return self.values["avatar"]

    def get_language(self) -> str | None:
        return self.values["language"]

    def get_model(self) -> str | None:
        return self.values["model"]

    def get_system_prompt_template(self) -> str:
        return self.template_for("system").source

    def get_user_prompt_template(self) -> str:
        return self.template_for("user").source

    def get_write_memory_template(self) -> str:
        return self.template_for("write_memory").source

    @property
    def provenance(self) -> dict[str, str]:
        """Where each field's value came from, e.g. `env:SUMMARY_PROFILE_NAME` or `default`."""
        return {name: item.source for name, item in self.resolved.items()}

    # rendering -------------------------------------------------------------
    def template_for(self, kind: str) -> CompiledTemplate:
        """The compiled template this profile renders `kind` with: its own, else a bundled one."""
        own = self.templates.get(kind)
        if own is not None:
            return self.renderer.compile(own.source, f"{kind} ({own.origin})")
        if kind not in PROMPT_KINDS:
            known = ", ".join(sorted({*PROMPT_KINDS, *self.templates}))
            raise RenderError(f"unknown prompt kind {kind!r}; known kinds are {known}")
        return self.renderer.find(kind, self.values["language"])

    def format_system_prompt(
        self,
        question: str | None = None,
        *,
        most_recent_memories: str | None = None,
        resource_prompt: str | None = None,
        out_schema: str | None = None,
        now_time: str | None = None,
        is_retry_chat: bool = False,
        strict: bool = False,
        **variables: Any,
    ) -> str:
        """Render the system prompt; `is_retry_chat` swaps in the retry goal and constraints."""
        inputs = {
            "question": question,
            "most_recent_memories": most_recent_memories,
            "resource_prompt": resource_prompt,
            "out_schema": out_schema,
            "now_time": now_time,
            "is_retry_chat": is_retry_chat,
        }
        return self._render("system", inputs, variables, strict)

    def format_user_prompt(
        self,
        question: str | None = None,
        *,
        most_recent_memories: str | None = None,
        strict: bool = False,
        **variables: Any,
    ) -> str:
        """Render the user prompt from the question and the recent memories."""
        inputs = {"question": question, "most_recent_memories": most_recent_memories}
        return self._render("user", inputs, variables, strict)

    def format_write_memory_prompt(
        self,
        question: str | None = None,
        thought: str | None = None,
        action: str | None = None,
        observation: str | None = None,
        *,
        strict: bool = False,
        **variables: Any,
    ) -> str:
        """Render what the agent should remember of one step."""
        inputs = {"question": question, "thought": thought, "action": action, "observation": observation}
        return self._render("write_memory", inputs, variables, strict)

    def format_prompt(self, kind: str, *, strict: bool = False, **variables: Any) -> str:
        """Render any prompt kind; documented inputs of that kind are passed like other variables."""
        inputs = PROMPT_INPUTS.get(kind, _EMPTY)
        given = {name: variables.pop(name) for name in list(variables) if name in inputs}
        return self._render(kind, given, variables, strict)

    def partial(self, **variables: Any) -> DefaultProfile:
        """A new profile with `variables` bound for every later render; this one is unchanged."""
        return replace(self, bound=MappingProxyType({**self.bound, **variables}))

    def _render(self, kind: str, inputs: Mapping[str, Any], caller: Mapping[str, Any], strict: bool) -> str:
        compiled = self.template_for(kind)
        defaults = PROMPT_INPUTS.get(kind, _EMPTY)
        if strict and caller:
            used = set(compiled.declared)
            for template in self._field_template_list():
                used |= template.declared
            extra = sorted(name for name in caller if name not in used)
            if extra:
                raise RenderError(
                    f"strict mode: {kind} prompt does not use variable(s) {', '.join(extra)} "
                    f"(template {compiled.name!r}); remove them or render without strict"
                )

        def lookup(name: str, template: CompiledTemplate) -> Any:
            if name in caller:
                return caller[name]
            if name in inputs:
                return inputs[name]
            if name in self.bound:
                return self.bound[name]
            if name in self.values:
                return self.values[name]
            if name in defaults:
                return defaults[name]
            line = template.line_of(name)
            where = template.label + (f" line {line}" if line else "")
            raise RenderError(
                f"{where} uses {name!r}, which is not a profile field, not an input of the {kind} "
                f"prompt, and was not given; pass it ({name}=... in Python, --var {name}=... on the "
                "command line) or give it a default under 'variables:' in the persona"
            )

        names = compiled.declared
        variables = {name: lookup(name, compiled) for name in names}
        if self.field_templates:
            for field_name, templates in self.field_templates.items():
                if field_name not in names:
                    continue
                if isinstance(templates, tuple):
                    variables[field_name] = tuple(
                        self._render_field(item, lookup) if isinstance(item, CompiledTemplate) else item
                        for item in templates
                    )
                else:
                    variables[field_name] = self._render_field(templates, lookup)
        return self.renderer.render(compiled, variables).strip()

    def _render_field(self, template: CompiledTemplate, lookup: Any) -> str:
        return self.renderer.render(template, {name: lookup(name, template) for name in template.declared})

    def _field_template_list(self) -> list[CompiledTemplate]:
        found = []
        for templates in self.field_templates.values():
            items = templates if isinstance(templates, tuple) else (templates,)
            found.extend(item for item in items if isinstance(item, CompiledTemplate))
        return found

    def __repr__(self) -> str:
        name = self.resolved["name"]
        shown = "'***'" if name.secret else repr(name.value)
        return f"DefaultProfile(profile_id={self.profile_id!r}, name={shown})"


def build_profile(
    config: ProfileConfig,
    profile_id: Any,
    resolved: Mapping[str, Resolved],
    *,
    literal: Collection[str] = (),
) -> DefaultProfile:
    """Make a `DefaultProfile`, compiling once any field value that holds template syntax.

    Fields named in `literal` are data, not templates (a dataset's cells, say): braces in them are
    printed as they are and never run.
    """
    renderer = get_renderer()
    values = {name: item.value for name, item in resolved.items()}
    field_templates: dict[str, Any] = {}
    for name, value in values.items():
        if name in literal:
            continue
        if isinstance(value, str) and has_template_syntax(value):
            field_templates[name] = _compile_field(renderer, name, value)
        elif isinstance(value, tuple) and any(isinstance(item, str) and has_template_syntax(item) for item in value):
            field_templates[name] = tuple(
                _compile_field(renderer, f"{name}[{index}]", item) if has_template_syntax(item) else item
                for index, item in enumerate(value)
            )
    return DefaultProfile(
        profile_id=profile_id,
        resolved=MappingProxyType(dict(resolved)),
        values=MappingProxyType(values),
        templates=MappingProxyType(dict(config.templates)),
        bound=MappingProxyType(dict(config.variables)),
        field_templates=MappingProxyType(field_templates),
        renderer=renderer,
    )


def _compile_field(renderer: Renderer, name: str, text: str) -> CompiledTemplate:
    try:
        return renderer.compile(text, f"field '{name}'")
    except RenderError as exc:
        raise RenderError(
            f"field '{name}' holds template syntax that does not parse ({exc.message}); "
            "to keep braces literal, wrap them in {% raw %}…{% endraw %}"
        ) from None
