"""Profiles: a persona resolved for one context, immutable, that renders prompts, messages and requests.

A profile never reads the environment: every value was resolved when it was created, so
rendering is pure and the same profile renders the same prompt from any thread. Beyond prompt
text, `format_messages` arranges the prompts as chat messages (`messages.py`), `to_request`
builds a whole request body for one API (`requests.py`) and `parse_reply` reads a reply by the
persona's output schema (`output_schema.py`); those modules do the work, this one renders.

A profile is small: what every profile of one persona and context shares (literal fields,
renderer, field templates, per-kind render plans) lives in its plan (`plan.py`), and the profile
holds only its id and the values of its dynamic fields.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from dataclasses import FrozenInstanceError, dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from . import plan as _plans
from . import tracing
from .context import Context, Resolved
from .errors import (
    InputError,
    ProfilesError,
    RenderError,
    RequestError,
    ResourceError,
    SecretError,
)
from .fields import TemplateSource
from .inputs import InputSpec
from .messages import DEFAULT_LAYOUT, STYLES, MessageSlot, assemble, to_style
from .output_schema import OutputSchema, parse_reply
from .plan import KindPlan, ProfilePlan, build_plan, check_required, place, read_at
from .rendering.renderer import CompiledTemplate, Renderer
from .rendering.templates import DEFAULT_FAMILY, PROMPT_INPUTS
from .resources import check_resources
from .secrets import MaskedMapping, first_leak, redact
from .settings import SETTING_NAMES, SettingError, check_setting
from .tools import Tool, ToolSpecError, parse_tools

if TYPE_CHECKING:
    from pathlib import Path

    from .config import PersonaModel
    from .provenance import ExplainRow

__all__ = ["FROM_CONFIG", "DefaultProfile", "Profile", "build_profile"]

#: `build_profile(output_schema=FROM_CONFIG)`: take the persona's schema, fetching it from the store if named there.
FROM_CONFIG: Any = _plans.FROM_CONFIG


class Profile(ABC):
    """What an agent needs of its persona: identity getters and prompt rendering."""

    __slots__ = ()  # a subclass without slots of its own gets a `__dict__` as usual

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

#: Variables some kind documents (`most_recent_memories`, `now_time`, …): strict messages never refuse them.
_MESSAGE_INPUTS = frozenset(name for inputs in PROMPT_INPUTS.values() for name in inputs)

#: Attributes a profile takes from its plan, unchanged: what every profile of the plan shares.
_SHARED = (
    "templates",
    "field_templates",
    "renderer",
    "family",
    "tools",
    "requires_resources",
    "allow_secrets",
    "context",
    "inputs",
    "settings",
    "settings_extra",
    "output_schema",
    "layout",
    "roles",
    "metadata",
    "resolved_variables",
    "origins",
    "includes",
    "origin",
)


class DefaultProfile(Profile):
    """A profile made by `ProfileConfig.create_profile`; rendering never changes it.

    A profile is its plan (`plan.ProfilePlan`: what every profile made from the same persona and
    context shares, compiled once) and its own values: its id, and the values its dynamic fields
    resolved to. Every attribute below reads through to the plan, so a profile costs a few slots;
    `resolved` and `values` put its own values in front of the plan's.

    Attributes: `profile_id`, `resolved` (each field's value and source), `values`, `templates`
    (its own templates by kind), `bound` (variables bound for every render), `field_templates`,
    `renderer`, `family` (the template family picked from the model name), `tools`,
    `requires_resources`, `allow_secrets`, `context` (its deployment, language and model, None
    where secret), `inputs` (declared inputs), `settings` (model settings with sources),
    `settings_extra`, `output_schema`, `layout` (which kinds become which chat messages), `roles`,
    `metadata`, `resolved_variables`, `origins` (where each templated field and own template was
    written), `includes` (the stored prompts its templates include) and `origin` (what it was
    made from, for traces).
    """

    __slots__ = ("_base", "profile_id", "_own", "_views")

    #: The plan it shares with every profile made from the same persona and context.
    _base: ProfilePlan
    profile_id: Any
    #: The values of the plan's dynamic fields, in the plan's order.
    _own: tuple[Resolved, ...]
    #: `resolved` and `values` with the own values in front, made at first use; None until then.
    _views: tuple[Mapping[str, Resolved], Mapping[str, Any]] | None

    def __init__(
        self,
        profile_id: Any,
        resolved: Mapping[str, Resolved],
        values: Mapping[str, Any],
        templates: Mapping[str, Any],
        bound: Mapping[str, Any],
        field_templates: Mapping[str, Any],
        renderer: Renderer,
        family: str = DEFAULT_FAMILY,
        tools: tuple[Tool, ...] = (),
        requires_resources: bool = False,
        allow_secrets: frozenset[str] = frozenset(),
        context: Context | None = None,
        inputs: Mapping[str, InputSpec] = _EMPTY,
        settings: Mapping[str, Resolved] = _EMPTY,
        settings_extra: Mapping[str, Any] = _EMPTY,
        output_schema: OutputSchema | None = None,
        layout: tuple[MessageSlot, ...] = DEFAULT_LAYOUT,
        roles: Mapping[str, str] = _EMPTY,
        metadata: Mapping[str, Any] = _EMPTY,
        resolved_variables: Mapping[str, Resolved] = _EMPTY,
        origins: Mapping[str, str] = _EMPTY,
        plans: Mapping[str, Any] | None = None,
        includes: Mapping[str, TemplateSource] = _EMPTY,
        origin: Mapping[str, Any] = _EMPTY,
    ) -> None:
        """A profile of these parts, each as the attribute of that name holds it; `build_profile`
        makes them from a persona. `plans` is accepted and ignored: a new profile plans its
        renders anew."""
        plan = ProfilePlan(
            resolved=resolved,
            values=values,
            templates=templates,
            bound=bound,
            field_templates=field_templates,
            renderer=renderer,
            family=family,
            tools=tools,
            requires_resources=requires_resources,
            allow_secrets=allow_secrets,
            context=context if context is not None else Context(),
            inputs=inputs,
            settings=settings,
            settings_extra=settings_extra,
            output_schema=output_schema,
            layout=layout,
            roles=roles,
            metadata=metadata,
            resolved_variables=resolved_variables,
            origins=origins,
            includes=includes,
            origin=origin,
        )
        _init(self, plan, profile_id, ())

    @classmethod
    def from_plan(cls, plan: ProfilePlan, profile_id: Any = None, own: tuple[Resolved, ...] = ()) -> DefaultProfile:
        """The profile of `plan` with this id and its own values of the plan's dynamic fields.

        What `create_profile` makes: the plan is shared, so this costs one small object.
        """
        profile = _new(cls)
        _init(profile, plan, profile_id, own)
        return profile

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (DefaultProfile.from_plan, (self._base, self.profile_id, self._own))

    # what the plan holds -------------------------------------------------------------------
    @property
    def resolved(self) -> Mapping[str, Resolved]:
        """Each field's value and where it came from."""
        if not self._own:
            return self._base.resolved
        return (self._views or self._make_views())[0]

    @property
    def values(self) -> Mapping[str, Any]:
        """Each field's value; printed, a secret one shows as `***`."""
        values = self._raw_values()
        secret = [name for name, item in self.resolved.items() if item.secret and item.value is not None]
        return MaskedMapping(values, secret) if secret else values

    @property
    def bound(self) -> Mapping[str, Any]:
        """Variables bound for every render (`variables:`, `partial`); printed, a secret one shows as `***`."""
        bound = self._base.bound
        secret = [
            name
            for name, item in self._base.resolved_variables.items()
            if item.secret and item.value is not None and bound.get(name) is item.value
        ]
        return MaskedMapping(bound, secret) if secret else bound

    def _raw_values(self) -> Mapping[str, Any]:
        if not self._own:
            return self._base.values
        return (self._views or self._make_views())[1]

    def _make_views(self) -> tuple[Mapping[str, Resolved], Mapping[str, Any]]:
        plan, own = self._base, self._own
        resolved, values = dict(plan.resolved), dict(plan.values)
        for name, position in plan.index.items():
            resolved[name] = own[position]
            values[name] = own[position].value
        views = (MappingProxyType(resolved), MappingProxyType(values))
        _set_views(self, views)  # the same mappings each time; made from immutable parts
        return views

    def _value(self, name: str) -> Any:
        position = self._base.index.get(name)
        return self._base.values[name] if position is None else self._own[position].value

    def _plan(self, kind: str) -> KindPlan:
        """What every render of `kind` shares (the template, the values from the persona, what
        the caller must give), worked out at its first render and shared with the plan."""
        return self._base.kind(kind, self._label)

    @property
    def plans(self) -> Mapping[str, KindPlan]:
        """Per prompt kind, what every render of it shares: shared by every profile of the plan."""
        return self._base.kinds

    @property
    def _hidden(self) -> tuple[tuple[str, Resolved], ...]:
        """The secrets the persona does not let out, with their names: usually none."""
        hidden = self._base.hidden
        if not hidden or not self._own:
            return hidden  # type: ignore[return-value]
        own = self._own
        return tuple((name, own[item] if isinstance(item, int) else item) for name, item in hidden)

    # getters ---------------------------------------------------------------
    def get_name(self) -> str | None:
        return self._value("name")

    def get_role(self) -> str | None:
        return self._value("role")

    def get_goal(self) -> str | None:
        return self._value("goal")

    def get_retry_goal(self) -> str | None:
        return self._value("retry_goal")

    def get_constraints(self) -> list[str] | None:
        value = self._value("constraints")
        return list(value) if value is not None else None

    def get_retry_constraints(self) -> list[str] | None:
        value = self._value("retry_constraints")
        return list(value) if value is not None else None

    def get_description(self) -> str | None:
        return self._value("desc")

    def get_expand_prompt(self) -> str | None:
        return self._value("expand_prompt")

    def get_examples(self) -> str | None:
        return self._value("examples")

    def get_avatar(self) -> str | None:
        return self._value("avatar")

    def get_language(self) -> str | None:
        return self._value("language")

    def get_model(self) -> str | None:
        return self._value("model")

    def get_system_prompt_template(self) -> str:
        return self.template_for("system").source

    def get_user_prompt_template(self) -> str:
        return self.template_for("user").source

    def get_write_memory_template(self) -> str:
        return self.template_for("write_memory").source

    def get_deployment(self) -> str | None:
        """The deployment this profile was made for (`create_profile(deployment=…)`), if any."""
        return self.context.deployment

    @property
    def model_settings(self) -> dict[str, Any]:
        """The persona's model settings by name, e.g. `{"temperature": 0.2}`; see `settings` for sources."""
        return {name: item.value for name, item in self.settings.items()}

    @property
    def provenance(self) -> dict[str, str]:
        """Where each field's value came from, e.g. `env:SUMMARY_PROFILE_NAME from .env.prod` or `default`.

        The persona's `variables:` follow as `variables.<name>`, templates from the store as
        `templates.<kind>`, and the stored prompts they include as `include store:<name>`, each with
        its version and label.
        """
        found = {name: item.source for name, item in self.resolved.items()}
        found.update((f"variables.{name}", item.source) for name, item in self.resolved_variables.items())
        for kind, template in self.templates.items():
            if template.store_key:
                found[f"templates.{kind}"] = template.origin
        for name, part in self.includes.items():
            found[f"include {name}"] = part.origin
        return found

    def trace_attributes(self, kind: str | None = None) -> dict[str, Any]:
        """The OpenTelemetry span attributes of this profile (see `profiles.tracing`), and of the
        template of `kind` when given. Names and versions only: never a value."""
        values = self.values
        attributes: dict[str, Any] = {
            "profiles.persona.file": self.origin.get("file"),
            "profiles.deployment": self.origin.get("deployment"),
            "profiles.language": values.get("language") if isinstance(values.get("language"), str) else None,
            "profiles.model": values.get("model") if isinstance(values.get("model"), str) else None,
        }
        keys: list[str] = []
        versions: list[int] = []
        labels: list[str] = []
        arms: list[str] = []
        stale = False
        parts = [
            *((item.details, item.stale) for item in self.resolved.values()),
            *((item.details, False) for item in self.templates.values() if item.store_key),
            *((item.details, False) for item in self.includes.values()),
        ]
        for details, was_stale in parts:
            stale = stale or was_stale
            if not details or "key" not in details:
                continue
            keys.append(str(details["key"]))
            versions.append(int(details["version"]))
            labels.append("pinned" if details.get("pinned") else str(details.get("label", "")))
            arms.append(f"{details['arm']}/{details['arms']}" if "arm" in details else "")
            stale = stale or bool(details.get("stale"))
        if keys:
            attributes.update(
                {
                    "profiles.store.keys": keys,
                    "profiles.store.versions": versions,
                    "profiles.store.labels": labels,
                    "profiles.store.arms": arms,
                }
            )
        attributes["profiles.stale"] = stale
        if kind is not None:
            compiled = self.template_for(kind)
            attributes["profiles.prompt.kind"] = kind
            attributes["profiles.template.name"] = compiled.name
            attributes["profiles.template.hash"] = _text_hash(compiled.source)
        return attributes

    def explain(self) -> list[ExplainRow]:
        """One row per field: its value (masked when secret) and where it came from."""
        from .provenance import explain_profile  # imported here: rendering never needs it

        return explain_profile(self)

    def _secret_values(self) -> list[Any]:
        items = (*self.resolved.values(), *self.resolved_variables.values(), *self.settings.values())
        return [item.value for item in items if item.secret and item.value is not None]

    def _withheld(self, name: str) -> Resolved | None:
        """The resolved field or variable `name` when it holds a secret the persona does not allow."""
        return self._base.withheld(name, self.resolved)

    # rendering -------------------------------------------------------------
    def known_kinds(self) -> tuple[str, ...]:
        """Every prompt kind this profile can render: bundled, its template roots', and its own."""
        return self._base.known_kinds()

    def template_for(self, kind: str) -> CompiledTemplate:
        """The compiled template this profile renders `kind` with.

        The persona's own template wins; else the roots are searched by locale, then family
        (this profile's, then `default`), then root order; see `rendering/templates.py`.
        """
        return self._base.template_for(kind)

    def with_templates(self, **templates: str | TemplateSource) -> DefaultProfile:
        """A new profile rendering the given kinds with these template texts; this one is unchanged.

        Each template is compiled now, so a syntax error shows here rather than at the first
        render. A `react` template must still use `tools` and `tool_names`, or the model would not
        learn which tools the parser accepts.

        Raises:
            RenderError: a template does not parse, or misses a variable its kind needs.
        """
        replaced = dict(self.templates)
        for kind, template in templates.items():
            if isinstance(template, str):
                template = TemplateSource(template, "with_templates")
            elif not isinstance(template, TemplateSource):
                raise RenderError(f"template for {kind!r} must be text, got {type(template).__name__}")
            check_required(kind, self.renderer.compile(template.source, f"{kind} ({template.origin})"))
            replaced[kind] = template
        return DefaultProfile.from_plan(
            self._base.derive(self._own, templates=MappingProxyType(replaced)), self.profile_id
        )

    def format_system_prompt(
        self,
        question: str | None = None,
        *,
        most_recent_memories: str | None = None,
        resource_prompt: str | None = None,
        out_schema: str | None = None,
        now_time: str | None = None,
        is_retry_chat: bool = False,
        resources: Sequence[Mapping[str, Any]] | None = None,
        strict: bool = False,
        **variables: Any,
    ) -> str:
        """Render the system prompt; `is_retry_chat` swaps in the retry goal and constraints.

        `resources` (each `{content, source?, title?}`) are formatted by the model family's
        `format_resources` macro into the resource section; give them or `resource_prompt`.

        Raises:
            ResourceError: resources are malformed, or the persona requires them and none has content.
        """
        inputs = {
            "question": question,
            "most_recent_memories": most_recent_memories,
            "resource_prompt": resource_prompt,
            "out_schema": out_schema,
            "now_time": now_time,
            "is_retry_chat": is_retry_chat,
            "resources": resources,
        }
        return self._render("system", *self._prepare("system", inputs, variables), strict)

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
        return self._render("user", *self._prepare("user", inputs, variables), strict)

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
        return self._render("write_memory", *self._prepare("write_memory", inputs, variables), strict)

    def format_prompt(self, kind: str, *, strict: bool = False, **variables: Any) -> str:
        """Render any prompt kind; documented inputs of that kind are passed like other variables.

        `tools=[...]` replaces the persona's tools for this render (the `react` kind needs some);
        `resources=[...]` is formatted into `resource_prompt` as for the system prompt.

        Raises:
            TemplateNotFoundError: the kind is unknown; the message lists the known ones.
        """
        inputs = PROMPT_INPUTS.get(kind, _EMPTY)
        given = {name: variables.pop(name) for name in list(variables) if name in inputs}
        return self._render(kind, *self._prepare(kind, given, variables), strict)

    def partial(self, **variables: Any) -> DefaultProfile:
        """A new profile with `variables` bound for every later render; this one is unchanged.

        Raises:
            InputError: a value does not fit its declared input.
        """
        if self.inputs:
            self._check_inputs(variables)
        plan = self._base.derive(self._own, bound=MappingProxyType({**self.bound, **variables}))
        return DefaultProfile.from_plan(plan, self.profile_id)

    # messages, requests and replies ------------------------------------------------------------
    def format_messages(
        self,
        question: str | None = None,
        *,
        history: Sequence[Mapping[str, Any]] | None = None,
        resources: Sequence[Mapping[str, Any]] | None = None,
        is_retry_chat: bool = False,
        style: str = "openai",
        strict: bool = False,
        **variables: Any,
    ) -> list[dict[str, Any]] | dict[str, Any]:
        """The prompts as chat messages, by the persona's `messages:` layout, with `history` in its slot.

        By default: the system prompt, then `history` (OpenAI Chat turns, checked: roles, content,
        tool calls answered), then the user prompt; a prompt that renders empty leaves no message.
        `style="anthropic"` returns `{"system": …, "messages": […]}` in Anthropic's shape. Each
        prompt gets the variables its kind documents (`most_recent_memories`, `now_time`, …) and
        yours; `resources` go to the system prompt. With `strict`, a variable no prompt of the
        layout uses is an error.

        Raises:
            HistoryError: `history` is malformed, or does not fit Anthropic's rules.
            RenderError: a prompt fails to render (see `format_system_prompt`).
            SecretError: a secret would reach a message.
        """
        if style not in STYLES:
            raise RenderError(f"unknown style {style!r}; use one of {', '.join(STYLES)}")
        api = "anthropic" if style == "anthropic" else "openai-chat"
        messages = self._messages(question, history, resources, is_retry_chat, strict, variables, api)
        return to_style(messages, style)

    def format_write_memory_messages(
        self,
        question: str | None = None,
        thought: str | None = None,
        action: str | None = None,
        observation: str | None = None,
        *,
        style: str = "openai",
        strict: bool = False,
        **variables: Any,
    ) -> list[dict[str, Any]] | dict[str, Any]:
        """The write-memory prompt as messages: one message, sent as `roles: {write_memory: …}` or user.

        Raises:
            RenderError: the prompt fails to render.
        """
        if style not in STYLES:
            raise RenderError(f"unknown style {style!r}; use one of {', '.join(STYLES)}")
        text = self.format_write_memory_prompt(question, thought, action, observation, strict=strict, **variables)
        messages = [{"role": self.roles.get("write_memory", "user"), "content": text}] if text.strip() else []
        # the thought, action and observation are the caller's: one may carry a secret, as history can
        self._guard_secrets(messages)
        return to_style(messages, style)

    def to_request(
        self,
        question: str | None = None,
        *,
        api: str = "openai-chat",
        history: Sequence[Mapping[str, Any]] | None = None,
        resources: Sequence[Mapping[str, Any]] | None = None,
        is_retry_chat: bool = False,
        model: str | None = None,
        tools: Sequence[Any] | None = None,
        settings: Mapping[str, Any] | None = None,
        unsupported: str = "drop",
        strict: bool = False,
        **variables: Any,
    ) -> dict[str, Any]:
        """A complete request body for `api`: `openai-chat`, `openai-responses` or `anthropic`.

        The messages are `format_messages`'s (history checked by that API's rules); the tools are
        the persona's in the API's schema (`tools=` replaces them); the output schema is the API's
        response format; the model settings are those the API takes, under its names, the others
        left out (`unsupported="error"` refuses them instead). `model=` and `settings=` replace the
        persona's for this call. The body is plain data for any client; it never holds an API key.

        Raises:
            RequestError: no model is known, or the API refuses a tool's name or a setting.
            HistoryError: `history` is malformed for this API.
            SecretError: a secret would reach the body.
        """
        from .requests import build_request, check_api  # imported here: rendering never needs it

        api = check_api(api)
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise RequestError(f"model= must be the model's name as text, e.g. model='gpt-4o', got {model!r}")
        messages = self._messages(question, history, resources, is_retry_chat, strict, variables, api)
        chosen = model if model is not None else self._model_for_request()
        if not chosen or not isinstance(chosen, str):
            raise RequestError(
                f"{self._label()} names no model; set 'model:' in the persona, or pass model=… "
                "(--model on the command line)"
            )
        body = build_request(
            api,
            messages,
            model=chosen,
            tools=self.tools if tools is None else _checked_tools(tools),
            output=self.output_schema,
            settings=self._request_settings(settings),
            extra=self.settings_extra,
            unsupported=unsupported,
        )
        self._guard_secrets(body)
        if tracing.recording():  # the prompts recorded themselves as they rendered; this names the API
            tracing.annotate({**self.trace_attributes(), "profiles.request.api": api})
        return body

    def parse_reply(self, text: str) -> Any:
        """The JSON value a model's reply holds, checked against the persona's `output_schema`.

        Broken JSON is repaired first (code fences, prose around it, trailing commas). Without an
        output schema, any JSON value is returned.

        Raises:
            SchemaReplyError: no JSON, or JSON the schema refuses; the message can be sent back
                to the model as a correction.
        """
        return parse_reply(text, self.output_schema)

    def _messages(
        self,
        question: str | None,
        history: Sequence[Mapping[str, Any]] | None,
        resources: Sequence[Mapping[str, Any]] | None,
        is_retry_chat: bool,
        strict: bool,
        variables: Mapping[str, Any],
        api: str,
    ) -> list[dict[str, Any]]:
        """The Chat-shaped message list, history checked for `api`."""
        if strict and variables:
            self._check_strict_layout(variables)

        def render(kind: str) -> str:
            documented = PROMPT_INPUTS.get(kind, _EMPTY)
            inputs: dict[str, Any] = {}
            caller: dict[str, Any] = {}
            # question and is_retry_chat are inputs where the kind documents them, variables elsewhere
            (inputs if "question" in documented else caller)["question"] = question
            (inputs if "is_retry_chat" in documented else caller)["is_retry_chat"] = is_retry_chat
            for name, value in variables.items():
                (inputs if name in documented else caller)[name] = value
            if kind == "system":
                inputs["resources"] = resources
            else:
                caller.pop("resources", None)
            return self._render(kind, *self._prepare(kind, inputs, caller), False)

        messages = assemble(self.layout, self.roles, render, history, api=api)
        # the prompts never render a secret the persona keeps in; history and variables might carry one
        self._guard_secrets(messages)
        return messages

    def _check_strict_layout(self, variables: Mapping[str, Any]) -> None:
        kinds = [slot.kind for slot in self.layout if slot.kind]
        self.check_strict(kinds, variables, what="of the messages")

    def check_strict(self, kinds: Sequence[str], variables: Mapping[str, Any], *, what: str = "") -> None:
        """Strict mode over several prompts rendered together: refuse the variables none of `kinds` uses.

        A variable one prompt uses and another does not is fine when they are rendered together
        (the system and user prompts of `profiles render --kind all`, the prompts of the messages);
        the documented inputs of a prompt kind always are.

        Raises:
            RenderError: naming the variables no prompt of `kinds` uses.
        """
        used: set[str] = set()
        for kind in kinds:
            used |= self._base.kind(kind, self._label).used
        extra = sorted(name for name in variables if name not in used and name not in _MESSAGE_INPUTS)
        if extra:
            raise RenderError(
                f"strict mode: no prompt {what or ''}{' ' if what else ''}({', '.join(kinds)}) uses variable(s) "
                f"{', '.join(extra)}; remove them or render without strict"
            )

    def _model_for_request(self) -> Any:
        item = self.resolved.get("model")
        if item is not None and item.secret and item.value is not None and "model" not in self.allow_secrets:
            raise SecretError(
                f"field 'model' holds a secret (source {item.source}) and would go into the request body; list it "
                "under 'allow_secrets: [model]' if it may be sent, or pass model=…"
            )
        return self.values.get("model")

    def _request_settings(self, given: Mapping[str, Any] | None) -> dict[str, Any]:
        """The settings a request is sent with: the persona's, then `given`, each checked."""
        values: dict[str, Any] = {}
        for name, item in self.settings.items():
            key = f"model_settings.{name}"
            if item.secret and item.value is not None and key not in self.allow_secrets:
                raise SecretError(
                    f"{key} holds a secret (source {item.source}) and would go into the request body; list "
                    f"'{key}' under allow_secrets if it may be sent, or read it from a key that is not a credential"
                )
            values[name] = item.value
        if given is not None and not isinstance(given, Mapping):
            raise RequestError(
                f"settings must be a mapping of setting name to value, e.g. settings={{'temperature': 0.2}}, got "
                f"{type(given).__name__}"
            )
        for name, value in (given or {}).items():
            try:
                values[name] = None if value is None else check_setting(name, value)
            except KeyError:
                raise RequestError(
                    f"settings: {name!r} is not a model setting; the settings are {', '.join(SETTING_NAMES)}"
                ) from None
            except SettingError as exc:
                raise RequestError(f"settings: {exc}") from None
        return values

    def _guard_secrets(self, data: Any) -> None:
        """Refuse `data` when a secret the persona does not allow out appears anywhere in it."""
        if not self._hidden:
            return
        leaked = first_leak(data, [(name, item.value) for name, item in self._hidden])
        if leaked is not None:
            source = dict(self._hidden)[leaked].source
            allow = "" if leaked.startswith("variables.") else f", or list {leaked} under allow_secrets"
            raise SecretError(
                f"the value of {leaked!r} (a secret, source {source}) appears in the messages or request; "
                f"remove it from the history and variables{allow}"
            )

    def _check_inputs(self, values: Mapping[str, Any]) -> None:
        """Refuse a value that does not fit its declared input, naming the input and what it takes."""
        for name, value in values.items():
            spec = self.inputs.get(name)
            if spec is None or value is None:
                continue
            problem = spec.problem(value)
            if problem:
                what = f" ({spec.description})" if spec.description else ""
                raise InputError(
                    f"input {name!r}{what} of {self._label()}: {problem}; pass {spec.expected}", input=name
                )

    def _prepare(
        self, kind: str, inputs: Mapping[str, Any], caller: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Turn the caller's tools and resources into what templates read; check what a kind needs."""
        if (
            kind != "react"
            and not (kind == "system" and self.requires_resources)
            and inputs.get("tools") is None
            and inputs.get("resources") is None
            and "tools" not in caller
            and "resources" not in caller
        ):
            return inputs, caller  # the persona's own tools, and no resources: the plan holds them
        inputs, caller = dict(inputs), dict(caller)
        given = inputs.pop("tools", None)
        if given is None:
            given = caller.pop("tools", None)
        tools = self.tools if given is None else _checked_tools(given)
        inputs["tools"] = tools
        inputs["tool_names"] = ", ".join(tool.name for tool in tools)
        if kind == "react" and not tools:
            raise RenderError(
                f"the react prompt of {self._label()} needs at least one tool; list them under 'tools:' in "
                'the persona or pass tools=[{"name": …, "description": …, "parameters": {…}}]'
            )
        resources = inputs.pop("resources", None)
        if resources is None:
            resources = caller.pop("resources", None)
        items = check_resources(resources)
        inputs["resources"] = items
        if items:
            if inputs.get("resource_prompt"):
                raise ResourceError("give resources or resource_prompt, not both: resources are formatted into it")
            formatter = self.renderer.resource_formatter(self.family)
            inputs["resource_prompt"] = self.renderer.render(formatter, {"resources": items}).strip()
        elif kind == "system" and self.requires_resources and not _has_text(inputs.get("resource_prompt")):
            what = "only blank resources" if resources else "no resources"
            raise ResourceError(
                f"{self._label()} requires resources (requires_resources: true), but the system prompt got "
                f'{what}; pass resources=[{{"content": …}}] with the documents\' text, or set '
                "requires_resources: false"
            )
        return inputs, caller

    def _label(self) -> str:
        name = self.resolved["name"] if "name" in self.resolved else None
        if name is None or name.secret or not name.value:
            return f"profile {self.profile_id!r}" if self.profile_id is not None else "this profile"
        return f"profile {name.value!r}"

    def _render(self, kind: str, inputs: Mapping[str, Any], caller: Mapping[str, Any], strict: bool) -> str:
        try:
            return self._render_unsafe(kind, inputs, caller, strict)
        except ProfilesError as exc:
            error = exc
            if isinstance(exc, RenderError) and exc.limit == "PROFILES_MAX_OUTPUT_CHARS":
                error = self._oversized(exc, kind, caller)
            secrets = self._secret_values()
            # a template's error may quote what it rendered; an allowed secret must not leak that way
            text = redact(error.message, secrets) if secrets else error.message
            if text == exc.message:
                raise
            if text == error.message:
                raise error from None
            if isinstance(error, SecretError):
                raise SecretError(text) from None
            template, limit = getattr(error, "template", None), getattr(error, "limit", None)
            raise RenderError(text, template=template, limit=limit) from None

    def _render_unsafe(self, kind: str, inputs: Mapping[str, Any], caller: Mapping[str, Any], strict: bool) -> str:
        plan = self._base.kinds.get(kind)
        if plan is None:
            plan = self._base.kind(kind, self._label)
        compiled = plan.compiled
        if tracing.recording():  # one dictionary lookup when no application traces
            tracing.annotate(self.trace_attributes(kind))
        passed = plan.passed
        if self.inputs:
            self._check_inputs(caller)
            self._check_inputs(inputs)
        if strict and caller:
            extra = sorted(name for name in caller if name not in plan.used)
            if extra:
                raise RenderError(
                    f"strict mode: {kind} prompt does not use variable(s) {', '.join(extra)} "
                    f"(template {compiled.name!r}); remove them or render without strict"
                )
        variables = plan.shared.copy()
        if plan.from_own:
            own = self._own
            for name, position in plan.from_own:
                variables[name] = own[position].value
        for name, value in inputs.items():
            if value is not None and (passed is None or name in passed):
                variables[name] = value
        for name, value in caller.items():
            if passed is None or name in passed:
                variables[name] = value
        if plan.unresolved:
            for name in plan.unresolved:
                if name not in variables:
                    if name in self.inputs:
                        raise self._missing_input(name, compiled)
                    raise self._missing(name, compiled, kind)
        if plan.required:
            for name in plan.required:
                if variables.get(name) is None:
                    raise self._missing_input(name, compiled)
        if plan.secret:
            for name in plan.secret:
                if name not in caller and inputs.get(name) is None:
                    item = self._withheld(name) or Resolved(None, "?")
                    raise _secret_error(name, item, compiled, kind, variable=name in self.bound)
        if plan.fields:
            rendered: dict[str, Any] = {}
            lookup = self._lookup(kind, inputs, caller, rendered)
            for field_name, templates in plan.fields:
                if isinstance(templates, tuple):
                    value: Any = tuple(
                        self._render_field(item, lookup) if isinstance(item, CompiledTemplate) else item
                        for item in templates
                    )
                else:
                    value = self._render_field(templates, lookup)
                rendered[field_name] = value
                if field_name in plan.field_targets and field_name not in caller:
                    variables[field_name] = value
        return self.renderer.render(compiled, variables).strip()

    def _missing_input(self, name: str, template: CompiledTemplate) -> InputError:
        spec = self.inputs[name]
        what = f" ({spec.description})" if spec.description else ""
        return InputError(
            f"input {name!r}{what} is required by {read_at(template, name)}, expecting {spec.expected}; pass it "
            f"({name}=… in Python, --var {name}=… on the command line), or give it a default under 'inputs:'",
            input=name,
        )

    def _lookup(
        self, kind: str, inputs: Mapping[str, Any], caller: Mapping[str, Any], rendered: Mapping[str, Any]
    ) -> Any:
        """Find a field template's variable the way the prompt's own variables are found.

        A field that is itself a template gives its rendered text, so `desc: "{{ goal }}"` reads
        the goal with its own variables filled in.
        """
        defaults = self._base.kind_defaults(kind)
        bound, values, withheld, declared = self._base.bound, self._raw_values(), self._base.withheld_names, self.inputs

        def lookup(name: str, template: CompiledTemplate) -> Any:
            if name in caller:
                return caller[name]
            value = inputs.get(name)
            if value is not None:
                return value
            if name in withheld:
                raise _secret_error(
                    name, self._withheld(name), template, kind, variable=name in bound  # type: ignore[arg-type]
                )
            if name in bound:
                return bound[name]
            if name in values:
                return rendered[name] if name in rendered else values[name]
            if name in defaults:
                return defaults[name]
            spec = declared.get(name)
            if spec is not None:
                if spec.needs_value:
                    raise self._missing_input(name, template)
                if name in template.required:
                    return None  # an optional input not given reads as nothing
            if name not in template.required:
                return _ABSENT
            raise self._missing(name, template, kind)

        return lookup

    def _missing(self, name: str, template: CompiledTemplate, kind: str) -> RenderError:
        item = template.variables.get(name)
        return RenderError(
            f"{self._origin(template)}{template.where(name)} uses {name!r}, which is not a profile field, not an "
            f"input of the {kind} prompt, and was not given; pass it ({name}=... in Python, --var {name}=... on "
            "the command line) or give it a default under 'variables:' in the persona",
            template=item.template if item is not None else template.name,
            line=item.line if item is not None else None,
        )

    def _origin(self, template: CompiledTemplate) -> str:
        """`planner.yaml:7: ` for a template written in the persona (a field, an own template), else nothing."""
        where = self.origins.get(template.name)
        return f"{where}: " if where else ""

    def _render_field(self, template: CompiledTemplate, lookup: Any) -> str:
        values = {name: lookup(name, template) for name in template.declared}
        if template.required is not template.declared:  # an optional variable nothing gives stays undefined
            values = {name: value for name, value in values.items() if value is not _ABSENT}
        try:
            return self.renderer.render(template, values)
        except RenderError as exc:
            origin = self._origin(template)
            if not origin:
                raise
            raise RenderError(
                f"{origin}{exc.message}", template=exc.template, line=exc.line, limit=exc.limit
            ) from None

    def _oversized(self, exc: RenderError, kind: str, caller: Mapping[str, Any]) -> RenderError:
        """The output limit tripped: name the value that holds most of it, and where it was written."""
        limit = self.renderer.max_output_chars
        values = {**self.values, **self.bound, **caller}
        size, name = max(((_text_size(value), name) for name, value in values.items()), default=(0, ""))
        if size < limit // 2:
            return exc  # no one value is to blame: the template's own message says what to do
        if name in caller:
            what = f"variable {name!r}, as passed,"
        elif name in self.bound:
            item = self.resolved_variables.get(name)
            what = f"variable {name!r}" + (f" ({place(item.source)})" if item is not None else "")
        else:
            what = f"field {name!r} ({place(self.resolved[name].source)})"
        return RenderError(
            f"{what} holds {size} characters, so the {kind} prompt would pass the output limit of {limit} "
            "characters; shorten it, or raise the limit (PROFILES_MAX_OUTPUT_CHARS, or "
            f"Renderer(max_output_chars=…)). {exc.message}",
            template=exc.template,
            limit=exc.limit,
        )

    def __repr__(self) -> str:
        name = self.resolved["name"]
        shown = "'***'" if name.secret else repr(name.value)
        return f"DefaultProfile(profile_id={self.profile_id!r}, name={shown})"


def _secret_error(
    name: str, item: Resolved, template: CompiledTemplate, kind: str, *, variable: bool = False
) -> SecretError:
    """`variable`: the secret is a `variables:` entry, which `allow_secrets` cannot let out, not a field."""
    where = read_at(template, name)
    if variable:
        return SecretError(
            f"variable {name!r} holds a secret (source {item.source}) and {where} would put it into the {kind} "
            f"prompt; a secret variable never reaches a prompt: pass a value of your own ({name}=...), or read "
            "the variable from a key that is not a credential"
        )
    return SecretError(
        f"field {name!r} holds a secret (source {item.source}) and {where} would put it into the {kind} "
        f"prompt; list it under 'allow_secrets: [{name}]' in the persona if it may be sent to the model, "
        f"pass a value of your own ({name}=...), or read the field from a key that is not a credential"
    )


def build_profile(
    config: PersonaModel,
    profile_id: Any,
    resolved: Mapping[str, Resolved],
    *,
    template_roots: Sequence[Path] = (),
    literal: Collection[str] = (),
    templates: Mapping[str, TemplateSource] | None = None,
    includes: Mapping[str, TemplateSource] | None = None,
    origin: Mapping[str, Any] | None = None,
    settings: Mapping[str, Resolved] | None = None,
    output_schema: Any = FROM_CONFIG,
    deployment: str | None = None,
    variables: Mapping[str, Resolved] | None = None,
) -> DefaultProfile:
    """Make a `DefaultProfile`, compiling once any field value that holds template syntax.

    `template_roots` are searched before the bundled templates; the model's family is picked here,
    once, so an unknown model warns at creation and never again at render. A secret's value is
    data, never a template: it is not compiled, so neither its text nor a syntax error quoting it
    can reach a prompt or a message. Fields named in `literal` are data too (a dataset's cells,
    say): braces in them are printed as they are and never run. `includes` are the texts of the
    named parts the templates include (fetched by resolution); the renderer serves them by name,
    sandboxed and bounded like any template. `origin` says what the profile was made from.

    `settings` are the resolved model settings, `output_schema` the fetched schema and `variables`
    the persona's `variables:` as resolved (`resolve.resolve_variables`); left out, they are
    resolved here for the profile's language, model and `deployment`.

    Templated fields are kept in the order they render in: a field that reads another renders
    after it, so it reads the other's text with its variables filled in.

    Raises:
        RenderError: a field's template syntax does not parse.
        ConfigError: templated fields read each other in a circle.
    """
    plan = build_plan(
        config,
        resolved,
        template_roots=template_roots,
        literal=literal,
        templates=templates,
        includes=includes,
        origin=origin,
        settings=settings,
        output_schema=output_schema,
        deployment=deployment,
        variables=variables,
    )
    return DefaultProfile.from_plan(plan, profile_id)


#: What a field template's lookup returns for an optional variable nothing gives.
_ABSENT = object()


def _text_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return sum(map(len, value))
    return 0


def _text_hash(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _has_text(value: Any) -> bool:
    return bool(str(value or "").strip())


def _checked_tools(value: Any) -> tuple[Tool, ...]:
    try:
        return parse_tools(value)
    except ToolSpecError as exc:
        raise RenderError(f"tools given to the render: {exc}") from None


@dataclass(frozen=True, eq=False)
class _Parts:
    """What a profile is made with, as `dataclasses.replace` and `dataclasses.fields` see a profile.

    Profiles were dataclasses of these; a profile keeps their fields' description, so
    `dataclasses.replace(profile, output_schema=…)` still makes a new profile with one part changed.
    """

    profile_id: Any
    resolved: Mapping[str, Resolved]
    values: Mapping[str, Any]
    templates: Mapping[str, Any]
    bound: Mapping[str, Any]
    field_templates: Mapping[str, Any]
    renderer: Renderer = field(repr=False)
    family: str = DEFAULT_FAMILY
    tools: tuple[Tool, ...] = ()
    requires_resources: bool = False
    allow_secrets: frozenset[str] = frozenset()
    context: Context = field(default_factory=Context, repr=False)
    inputs: Mapping[str, InputSpec] = field(default_factory=lambda: _EMPTY, repr=False)
    settings: Mapping[str, Resolved] = field(default_factory=lambda: _EMPTY, repr=False)
    settings_extra: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, repr=False)
    output_schema: OutputSchema | None = field(default=None, repr=False)
    layout: tuple[MessageSlot, ...] = DEFAULT_LAYOUT
    roles: Mapping[str, str] = field(default_factory=lambda: _EMPTY, repr=False)
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    resolved_variables: Mapping[str, Resolved] = field(default_factory=lambda: _EMPTY)
    origins: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    plans: Any = field(default=None, repr=False)
    includes: Mapping[str, TemplateSource] = field(default_factory=lambda: _EMPTY, repr=False)
    origin: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, repr=False)


DefaultProfile.__dataclass_fields__ = _Parts.__dataclass_fields__  # type: ignore[attr-defined]


def _shared_attribute(name: str) -> property:
    def read(self: DefaultProfile) -> Any:
        return getattr(self._base, name)

    read.__name__ = name
    read.__doc__ = f"The profile's `{name}`, shared with every profile of its plan (see `plan.ProfilePlan`)."
    return property(read)


for _name in _SHARED:
    setattr(DefaultProfile, _name, _shared_attribute(_name))
del _name

_new = object.__new__
_set_base = DefaultProfile._base.__set__  # type: ignore[attr-defined]
_set_id = DefaultProfile.profile_id.__set__  # type: ignore[attr-defined]
_set_own = DefaultProfile._own.__set__  # type: ignore[attr-defined]
_set_views = DefaultProfile._views.__set__  # type: ignore[attr-defined]


def _init(profile: DefaultProfile, plan: ProfilePlan, profile_id: Any, own: tuple[Resolved, ...]) -> None:
    """Fill a profile's slots past its `__setattr__`, which refuses every change."""
    _set_base(profile, plan)
    _set_id(profile, profile_id)
    _set_own(profile, own)
    _set_views(profile, None)
