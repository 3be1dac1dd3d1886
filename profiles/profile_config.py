"""`ProfileConfig`: the persona model completed with `create_profile`, the call users make.

The persona model (`config.PersonaModel`) only validates; resolution (`resolve`) turns it and a
context into values; `profile.build_profile` turns those into an immutable profile. This module
sits above all three and joins them, so no import runs upwards: `ProfileConfig.create_profile`
keeps DB-GPT's name and signature and delegates to `create_profile` below.

`create_profile` is cheap and deterministic, with no cache between calls for dynamic fields, so a
changed environment variable shows at the next call. A persona whose creations can differ only
in its fields (no factory, nothing but fields from the store or a provider) is compiled once per
deployment and template path into a plan (`plan.PersonaPlan`): each call looks up its dynamic
fields and makes a small profile sharing the rest. Any other persona, or a call with `overrides`
or `store_versions`, is resolved whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from . import tracing
from .config import PersonaModel
from .context import Context, Resolved
from .deployments import for_deployment
from .errors import ConfigError, FactoryError, ProfilesError, ResolutionError
from .fields import type_name
from .plan import persona_plan as plan_of
from .profile import DefaultProfile, Profile, build_profile
from .rendering.templates import language_problem
from .resolve import (
    choose_deployment,
    choose_rollout_key,
    env_template_roots,
    fetch_output_schema,
    fetch_templates,
    require_fields,
    resolve_fields,
    resolve_settings,
    resolve_variables,
)
from .secrets import redact

__all__ = ["ProfileConfig", "create_profile"]

#: Fields a factory is given, as keyword arguments.
FACTORY_FIELDS = ("name", "role", "goal", "language", "model")


class ProfileConfig(PersonaModel):
    """A persona: literal values or `DynConfig` fields, validated at construction.

    Unknown fields are refused. Without a factory, `name` and `role` are required. Text fields take
    a string or a `ConfigInfo`; `constraints` and `retry_constraints` a list of strings or a
    `ConfigInfo`. `templates` maps a prompt kind to `{file: path}`, `{inline: text}` or
    `{store: name}`; `variables` holds defaults for template variables. `tools` lists the tools
    the `react` prompt offers; `requires_resources` refuses a system prompt rendered without
    resources; `template_roots` names folders (relative to the persona, inside its folder)
    searched for `<family>/<locale>/<kind>.j2` templates before the bundled ones. `deployments`
    maps a deployment name to the fields it overrides, and `allow_secrets` names the secret fields
    that may reach a prompt. `inputs` declares the variables callers give, with their types;
    `model_settings`, `output_schema`, `roles` and `messages` say how prompts become chat messages
    (`format_messages`) and request bodies (`to_request`).
    """

    def create_profile(
        self,
        profile_id: Any = None,
        *,
        language: str | None = None,
        model: str | None = None,
        deployment: str | None = None,
        overrides: Mapping[str, Any] | None = None,
        rollout_key: str | None = None,
        store_versions: Mapping[str, int] | None = None,
    ) -> Profile:
        """Resolve every field for this context and return an immutable profile.

        Precedence, first wins: `overrides` > the field's provider > the field's default. The
        deployment is the argument, else `PROFILES_DEPLOYMENT`, else none; it picks the persona's
        overlay under `deployments:` and the `.env.<deployment>` file the `env` provider reads. A
        factory, when set, is called with keyword arguments and its non-None result wins over the
        fields.

        `rollout_key` (a user or session id; else `PROFILES_ROLLOUT_KEY`) picks one version of a
        store label rolled out over several, the same one for the same key every time; without a
        key, the first. `store_versions` pins store keys to versions (`{"summarizer/system": 4}`),
        whatever the labels say: to see a version before it is released.

        Raises:
            ResolutionError: a provider failed or is unknown, the deployment name is unsafe, or the
                language or model is not text.
            ConfigError: an override names an unknown field.
            RenderError: a field's template syntax does not parse.
        """
        return create_profile(
            self,
            profile_id,
            language=language,
            model=model,
            deployment=deployment,
            overrides=overrides,
            rollout_key=rollout_key,
            store_versions=store_versions,
        )

    def for_deployment(self, deployment: str | None) -> ProfileConfig:
        """This persona with `deployment`'s overlay applied; itself when there is none."""
        return for_deployment(self, deployment)

    def resolve(self, context: Context | None = None) -> dict[str, Resolved]:
        """Each profile field's value and source for `context` (overlays are applied by `create_profile`)."""
        return resolve_fields(self, context)


def create_profile(
    persona: PersonaModel,
    profile_id: Any = None,
    *,
    language: str | None = None,
    model: str | None = None,
    deployment: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    rollout_key: str | None = None,
    store_versions: Mapping[str, int] | None = None,
) -> Profile:
    """What `ProfileConfig.create_profile` does, for any persona model; see there."""
    if (language is not None and (type(language) is not str or language_problem(language))) or (
        model is not None and type(model) is not str
    ):
        _refuse_context(language=language, model=model)
    if overrides is not None or store_versions is not None:
        _refuse_mappings(overrides, store_versions)
    deployment = choose_deployment(deployment)
    if not overrides and not store_versions:
        # the persona compiled once for this deployment and template path: only its dynamic
        # fields are looked up, into a profile that shares everything else with its plan
        persona_plan = plan_of(persona, deployment, env_template_roots())
        if persona_plan is not None:
            plan, own = persona_plan.resolve(language, model, choose_rollout_key(rollout_key))
            profile = DefaultProfile.from_plan(plan, profile_id, own)
            if tracing.recording():
                tracing.annotate(profile.trace_attributes())
            return profile
    config = for_deployment(persona, deployment)
    roots = (*config.template_roots, *env_template_roots())
    context = Context(
        language=language,
        model=model,
        deployment=deployment,
        base_dir=persona._base_dir,
        overrides=dict(overrides or {}),
        rollout_key=choose_rollout_key(rollout_key),
        store_versions=dict(store_versions or {}),
    )
    resolved = resolve_fields(config, context)
    if config.factory is not None:
        made = _call_factory(config, profile_id, resolved)
        if made is not None:
            return made
    require_fields(config, resolved, lines=persona)
    chosen = replace(context, language=resolved["language"].value, model=resolved["model"].value)
    fetched = fetch_templates(config, chosen, lines=persona)
    templates, includes = fetched if fetched is not None else (None, None)
    built = build_profile(
        config,
        profile_id,
        resolved,
        template_roots=roots,
        templates=templates,
        includes=includes,
        origin={"file": persona._source_file, "deployment": deployment},
        settings=resolve_settings(config, chosen),
        output_schema=fetch_output_schema(config, chosen, lines=persona),
        deployment=deployment,
        variables=resolve_variables(config, chosen),
    )
    if tracing.recording():
        tracing.annotate(built.trace_attributes())
    return built


def _refuse_context(**given: Any) -> None:
    """A language or model that is not text: said here, before a lookup or a template trips on it."""
    for name, value in given.items():
        if value is not None and not isinstance(value, str):
            example = "'zh-TW'" if name == "language" else "'gpt-4o'"
            raise ResolutionError(f"{name} must be text such as {example} or None, got {type(value).__name__}")
    problem = language_problem(given["language"]) if isinstance(given.get("language"), str) else None
    if problem is not None:
        raise ResolutionError(f"language {problem}")


def _refuse_mappings(overrides: Any, store_versions: Any) -> None:
    """Overrides and pins of another shape: said here, before `dict()` or a lookup trips on them.

    Raises:
        ConfigError: `overrides` is no mapping of field names.
        ResolutionError: `store_versions` is no mapping of store key to version number.
    """
    if overrides is not None and (
        not isinstance(overrides, Mapping) or not all(isinstance(name, str) for name in overrides)
    ):
        raise ConfigError(
            f"overrides must be a mapping of field name to value, e.g. {{'name': 'Ada'}}, got {type_name(overrides)}"
            + ("" if not isinstance(overrides, Mapping) else " with a key that is not text")
        )
    if store_versions is None:
        return
    if not isinstance(store_versions, Mapping) or not all(
        isinstance(key, str) and type(version) is int for key, version in store_versions.items()
    ):
        raise ResolutionError(
            "store_versions must map a store key to a version number, e.g. {'summarizer/system': 4}, "
            f"got {type_name(store_versions)}"
            + ("" if not isinstance(store_versions, Mapping) else " holding another kind of key or version")
        )


def _call_factory(config: PersonaModel, profile_id: Any, resolved: Mapping[str, Resolved]) -> Profile | None:
    """Call the persona's factory with its resolved fields; a secret goes only where the persona allows."""
    # a factory may send what it is given to a model
    options = {
        field: None if resolved[field].secret and field not in config.allow_secrets else resolved[field].value
        for field in FACTORY_FIELDS
    }
    create = getattr(config.factory, "create_profile", None) or config.factory
    try:
        made = create(profile_id, **options)
    except ProfilesError:
        raise
    except Exception as exc:
        secrets = [item.value for item in resolved.values() if item.secret]
        raise FactoryError(
            redact(
                f"factory {type(config.factory).__name__} failed for profile {profile_id!r}: "
                f"{type(exc).__name__}: {exc}",
                secrets,
            )
        ) from exc
    if made is not None and not isinstance(made, Profile):
        raise FactoryError(
            f"factory {type(config.factory).__name__} returned {type_name(made)} for profile {profile_id!r}, "
            "not a Profile; return a profile (ProfileConfig(...).create_profile()), or None to use the fields"
        )
    return made
