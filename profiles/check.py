"""`profiles check`: load every persona and render every prompt it has, reporting all problems at once.

Meant for CI, where a persona written by one team is rendered by another's agents: a missing
variable, a sample nobody reads, a template error or a secret that would reach a prompt should
fail the pull request, not the agent at run time.

Each persona is rendered with its `samples:`. A key of `samples` is a variable name, or a prompt
kind (`system`, `user`, `write_memory`, `react`, or a kind in the persona's `templates:`) with a
mapping as its value: samples for that kind only, which win over the shared ones.

```yaml
samples:
  agents: Searcher, Coder        # every prompt kind
  user: {question: Plan a trip}  # the user prompt only
```

The kinds rendered are every kind the persona can render: `system`, `user`, `write_memory`, the
kinds of its template roots (`prompts/default/en/handoff.j2` is the `handoff` kind) and of
`PROFILES_TEMPLATE_PATH`, its own kinds under `templates:`, the kinds of its `messages:` layout,
and `react` when it has tools.

When the persona declares `inputs:`, each sample must have its input's type, and a required input
needs a sample (the first of its `examples` counts as one).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from os import PathLike
from pathlib import Path
from typing import Any

from .errors import ConfigError, ConfigIssue, ProfilesError, SecretError, closest
from .validate import kind_inputs

__all__ = ["CheckReport", "check_paths", "kind_samples", "prompt_kinds"]


@dataclass
class CheckReport:
    """What `check_paths` found: the personas checked and every problem, each with file and line."""

    checked: list[str] = field(default_factory=list)
    issues: list[ConfigIssue] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.issues


#: No item: what `next` gives when every path given is a path.
_NONE = object()


def check_paths(paths: str | Path | Iterable[str | Path]) -> CheckReport:
    """Load and render every persona in `paths`: files, or folders walked with their subfolders.

    One path may be given as it is (`check_paths("personas/")`). Folders are walked as
    `loader.load_persona_files` says, leaving out dataset mappings, family rules and parents
    (checked through each child). Never raises for a problem in a persona: every problem is an
    issue of the report.

    Raises:
        ConfigError: `paths` is neither a path nor a list of paths.
    """
    from .loader import load_persona_files

    report = CheckReport()
    if isinstance(paths, (str, PathLike)):
        paths = [paths]  # one path, not the characters of its name (a "/" among them walked the whole disk)
    try:
        items = list(paths)
    except TypeError:
        items = [paths]
    bad = next((item for item in items if not isinstance(item, (str, PathLike))), _NONE)
    if bad is not _NONE:
        raise ConfigError(
            f"check_paths takes a path or a list of paths (text or pathlib.Path), got {type(bad).__name__}"
        )
    try:
        files = load_persona_files([Path(path) for path in items])
    except ProfilesError as exc:
        report.issues.append(ConfigIssue(exc.message))
        return report
    if not files:
        report.issues.append(ConfigIssue("no persona files (*.yaml, *.yml) found; name a file or a folder"))
    for loaded in files:
        report.issues.extend(loaded.issues)
        for index, config in enumerate(loaded.configs, start=1):
            before = len(report.issues)
            _check_config(config, str(loaded.path), report.issues)
            if len(report.issues) == before:
                report.checked.append(loaded.label(index))
    return report



def _check_config(config: Any, file: str, issues: list[ConfigIssue]) -> None:
    """Check the persona as it is and in each deployment it lists; a problem every one shares is said once."""
    seen: set[tuple[str, str, Any]] = set()
    for deployment in (None, *sorted(getattr(config, "deployments", None) or ())):
        found: list[ConfigIssue] = []
        _check_deployment(config, deployment, file, found)
        for item in found:
            key = (item.message, item.field, item.line)
            if key in seen:
                continue
            seen.add(key)
            if deployment is not None:
                item = replace(item, message=f"deployment {deployment!r}: {item.message}")
            issues.append(item)


def _check_deployment(persona: Any, deployment: str | None, file: str, issues: list[ConfigIssue]) -> None:
    config = persona.for_deployment(deployment) if deployment else persona

    def issue(message: str, *path: str) -> None:
        # what the deployment's overlay writes is pointed at there
        found = (deployment and path and config.line_of("deployments", deployment, *path)) or (
            config.line_of(*path) if path else None
        )
        issues.append(ConfigIssue(message, ".".join(path), found[0] if found else file, found[1] if found else None))

    try:
        profile = persona.create_profile(deployment=deployment)
    except ProfilesError as exc:
        issues.append(_placed(exc.message, file))
        return
    kinds = prompt_kinds(config, profile)
    samples, per_kind = _split_samples(config, kinds)
    inputs = getattr(profile, "inputs", {})
    for scope, given in [(None, samples), *per_kind.items()]:
        for name, value in list(given.items()):
            spec = inputs.get(name)
            problem = spec.problem(value) if spec is not None and value is not None else None
            if problem:
                what = f"sample {name!r}" + (f" for the {scope} prompt" if scope else "")
                issue(f"{what} does not fit inputs.{name}: {problem}", "samples", *([scope] if scope else [name]))
                del given[name]  # reported once here, not again by every prompt it would reach
    written = set(samples)  # an input's examples stand in for samples, but are not checked for use
    samples = {**_examples(config), **samples}
    used_anywhere: set[str] = set()
    latent = _latent_secrets(config)
    for kind in kinds:
        given = {**samples, **per_kind.get(kind, {})}
        used = _check_kind(profile, kind, given, issue, latent)
        used_anywhere |= used
        for name in sorted(set(per_kind.get(kind, {})) - used):
            issue(f"sample {name!r} for the {kind} prompt is used by no template of that prompt; remove it", "samples")
    for name in sorted(written - used_anywhere):
        issue(f"sample {name!r} is used by no template of this persona; remove it or fix its name", "samples")


def prompt_kinds(config: Any, profile: Any) -> list[str]:
    """The prompt kinds `check` renders for a persona: every kind it can render.

    The built-in ones, the kinds of its template roots and of `PROFILES_TEMPLATE_PATH`, its own
    (`templates:`), those of its `messages:` layout, and `react` when it has tools, without which
    react refuses to render. Snapshots and `profiles diff` render the same ones.
    """
    from .rendering.templates import PROMPT_KINDS

    known = getattr(profile, "known_kinds", None)
    others = set(known() if known is not None else ()) | set(profile.templates)
    layout = {slot.kind for slot in getattr(config, "messages", None) or () if slot.kind}  # the kinds it sends
    others -= set(PROMPT_KINDS)
    if profile.tools:
        others.add("react")
    elif "react" not in profile.templates and "react" not in layout:
        others.discard("react")
    others |= layout - set(PROMPT_KINDS)
    return [*PROMPT_KINDS, *sorted(others)]


def _split_samples(config: Any, kinds: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    samples = dict(config.samples)
    per_kind = {
        kind: samples.pop(kind) for kind in list(samples) if kind in kinds and isinstance(samples[kind], Mapping)
    }
    return samples, per_kind


def _examples(config: Any) -> dict[str, Any]:
    """The first example of each declared input that has one: a sample when the persona gives none."""
    return {name: spec.examples[0] for name, spec in getattr(config, "inputs", {}).items() if spec.examples}


def kind_samples(config: Any, kinds: list[str]) -> dict[str, dict[str, Any]]:
    """The sample values each kind is rendered with: inputs' examples, the shared samples, then the kind's own."""
    samples, per_kind = _split_samples(config, kinds)
    shared = {**_examples(config), **samples}
    return {kind: {**shared, **per_kind.get(kind, {})} for kind in kinds}


def _latent_secrets(config: Any) -> dict[str, str]:
    """Fields that hold a secret whenever their key is set, whether or not it is set here, and why.

    A field marked `secret: true`, or read by the `env` provider from a key that looks like a
    credential (`API_KEY`): CI rarely has the production variables, so a prompt that would refuse
    such a field in production must fail the check already.
    """
    from .dynconfig import ConfigInfo
    from .fields import PROFILE_FIELDS
    from .secrets import looks_like_credential

    found = {}
    for name in PROFILE_FIELDS:
        info = getattr(config, name)
        if not isinstance(info, ConfigInfo) or name in config.allow_secrets:
            continue
        if info.secret:
            found[name] = "is marked secret: true"
        elif info.key and info.provider_name == "env" and looks_like_credential(info.key):
            found[name] = f"is read from env key {info.key!r}, whose name is a credential's"
    return found


def _placed(message: str, file: str) -> ConfigIssue:
    """A problem for `file`, keeping the place a message already names (`a.yaml:3: …`) once, not twice."""
    import re

    found = re.match(r"(.+?):(\d+)(?::(\d+))?: ", message)
    if found is None or found.group(1) != file:
        return ConfigIssue(message, file=file)
    column = int(found.group(3)) if found.group(3) else None
    return ConfigIssue(message[found.end() :], file=file, line=int(found.group(2)), column=column)


def _check_kind(
    profile: Any, kind: str, samples: dict[str, Any], issue: Any, latent: dict[str, str] | None = None
) -> set[str]:
    """Render one kind; report missing variables, secrets and errors. Returns the variables it uses."""
    own = ("templates",) if kind in profile.templates else ()  # its own template: point at `templates:`
    try:
        plan = profile._plan(kind)
    except ProfilesError as exc:
        issue(f"{kind} prompt: {exc.message}", *own)
        return set()
    placeholders: dict[str, Any] = {}
    sources: list[tuple[Any, tuple[str, ...]]] = [(plan.compiled, ())]
    for field_name, templates in plan.fields:
        for template in templates if isinstance(templates, tuple) else (templates,):
            if hasattr(template, "declared"):
                sources.append((template, (field_name,)))
    inputs = getattr(profile, "inputs", {})
    for template, path in sources:
        # a declared required input must be given even where the template tests it (`is defined`)
        needed = {
            *template.required,
            *(name for name in template.declared if name in inputs and inputs[name].needs_value),
        }
        for name in sorted(needed):
            if name in samples or name in placeholders or not _unknown(profile, kind, name):
                continue
            where = template.where(name) if not path else template.label
            spec = getattr(profile, "inputs", {}).get(name)
            if spec is not None:
                issue(
                    f"{kind} prompt: {where} reads input {name!r} ({spec.expected}), which is required and has no "
                    "sample; add one under 'samples:', or examples to its declaration",
                    "inputs",
                    name,
                )
            else:
                close = closest(name, {*profile.values, *profile.bound, *samples, *kind_inputs(kind)})
                hint = f"did you mean {close!r}? Else " if close else ""
                issue(
                    f"{kind} prompt: {where} uses {name!r}, which is no field, input or variable of this persona; "
                    f"{hint}add it under 'samples:' (or 'variables:' for a default)",
                    *(path or own),
                )
            placeholders[name] = _placeholder(name, spec)
    for name in plan.secret:
        if name in samples:
            continue
        issue(
            f"{kind} prompt: template {plan.compiled.name!r} uses secret field {name!r}; remove it from the "
            f"template or list it under allow_secrets",
            name,
        )
        placeholders[name] = "***"
    reads = set(plan.compiled.declared)
    for _, templates in plan.fields:
        for template in templates if isinstance(templates, tuple) else (templates,):
            reads |= set(getattr(template, "declared", ()))
    for name, why in sorted((latent or {}).items()):
        if name in reads and name not in plan.secret and name not in samples:
            issue(
                f"{kind} prompt: template {plan.compiled.name!r} uses field {name!r}, which {why}: whenever it is "
                "set, its value is a secret and rendering refuses it; list the field under allow_secrets if it may "
                "reach the model, or read it from a key that is not a credential's",
                name,
            )
    try:
        profile.format_prompt(kind, **{**placeholders, **samples})
    except SecretError as exc:
        issue(f"{kind} prompt: {exc.message}")
    except ProfilesError as exc:
        issue(f"{kind} prompt: {exc.message}", *own)
    return set(plan.used)


def _placeholder(name: str, spec: Any) -> Any:
    """A stand-in value for a variable with no sample, of the input's type when it has one."""
    if spec is None:
        return f"<{name}>"
    if spec.enum:
        return spec.enum[0]
    kind = spec.types[0] if spec.types else "string"
    return {"integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}.get(kind, f"<{name}>")


def _unknown(profile: Any, kind: str, name: str) -> bool:
    spec = getattr(profile, "inputs", {}).get(name)
    return not (
        name in profile.values
        or name in profile.bound
        or name in kind_inputs(kind)
        or (name == "out_schema" and getattr(profile, "output_schema", None) is not None)
        or (spec is not None and not spec.needs_value)
    )
