"""Whatever a file of another format holds, an import ends in personas or a ProfilesError, never another error."""

from __future__ import annotations

import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiles import interop
from profiles.errors import ProfilesError, ResolutionError

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False),
                    st.sampled_from(["", "x", "{topic}", "{{$input}}", "{{ name }}", "${env:HOME}", "${file:../x}",
                                     "a.b.c", "system:", "openai/gpt-4o", "{% for x in y %}", "}}"]))
KEYS = st.sampled_from([
    "role", "goal", "backstory", "llm", "tools", "name", "description", "model", "inputs", "sample", "template",
    "template_format", "input_variables", "execution_settings", "instructions", "type", "agent_class", "instruction",
    "sub_agents", "generate_content_config", "component_type", "system_prompt", "llm_config", "outputs", "metadata",
    "agent", "expected_output", "kind", "options", "id", "title", "config_path", "$component_ref", "max_tokens",
])
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(KEYS, inner, max_size=4)), max_leaves=12)
DOCUMENTS = st.dictionaries(st.one_of(KEYS, st.sampled_from(["writer", "task"])), VALUES, max_size=6)

#: FUZZ_EXAMPLES raises the number of examples for a longer hunt than CI's.
_SLOW = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]


def _examples_or(default: int) -> int:
    return int(os.environ.get("FUZZ_EXAMPLES", default))


CASES = {
    "crewai": "agents.yaml",
    "prompty": "p.prompty",
    "semantic-kernel": "prompt.yaml",
    "adk": "root_agent.yaml",
    "agentspec": "agent.json",
}


@settings(max_examples=_examples_or(150), deadline=None, suppress_health_check=_SLOW)
@given(st.sampled_from(sorted(CASES)), DOCUMENTS, st.sampled_from(["", "system:\nHi {{ x }}\nuser:\n{{question}}"]))
def test_imports_raise_only_profiles_errors(tmp_path_factory, format, document, body):
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / CASES[format]
    text = json.dumps(document)
    if format == "prompty":
        text = f"---\n{text}\n---\n{body}"
    path.write_text(text, encoding="utf-8")
    try:
        result = interop.load(format, path)
    except ProfilesError:
        return
    for persona in result.personas:
        persona.to_yaml()
        persona.config.create_profile()


def _examples() -> list[tuple[str, str, object]]:
    """Each bundled example of a single-file format: (format, file name, its data)."""
    import yaml

    from .conftest import EXAMPLES

    found = []
    for path in sorted((EXAMPLES / "agentspec").iterdir()):
        data = json.loads(path.read_text()) if path.suffix == ".json" else yaml.safe_load(path.read_text())
        found.append(("agentspec", "agent.json", data))
    for path in sorted((EXAMPLES / "semantic_kernel").rglob("*.yaml")):
        found.append(("semantic-kernel", "prompt.yaml", yaml.safe_load(path.read_text())))
    for path in sorted((EXAMPLES / "google_adk").rglob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        data.pop("sub_agents", None)
        found.append(("adk", "root_agent.yaml", data))
    for path in sorted((EXAMPLES / "crewai").rglob("agents.yaml")):
        found.append(("crewai", "agents.yaml", yaml.safe_load(path.read_text())))
    return found


EXAMPLE_DATA = _examples()


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


@settings(max_examples=_examples_or(300), deadline=None, suppress_health_check=_SLOW)
@given(st.sampled_from(range(len(EXAMPLE_DATA))), st.data())
def test_real_files_with_one_value_changed_raise_only_profiles_errors(tmp_path_factory, index, data):
    """A bundled example with any one value swapped for another kind of value imports or fails cleanly."""
    import copy

    format, name, original = EXAMPLE_DATA[index]
    document = copy.deepcopy(original)
    paths = [path for path in _paths(document) if path]
    path = data.draw(st.sampled_from(paths))
    target = document
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = data.draw(VALUES)
    folder = tmp_path_factory.mktemp("mutated")
    (folder / name).write_text(json.dumps(document, default=str), encoding="utf-8")
    try:
        result = interop.load(format, folder / name)
    except ProfilesError:
        return
    for persona in result.personas:
        persona.to_yaml()
        try:
            persona.config.create_profile()
        except ResolutionError as exc:
            # `${env:HOME}` imported as a setting reads the variable at creation: "/root" is no max_tokens
            assert " from env:HOME: " in str(exc), exc


#: Mappings whose keys name data rather than settings: inputs, schemas and sample values, where an
#: input called `token` or a schema property called `password` is no credential.
_DATA_NOT_SETTINGS = {"inputs", "input_variables", "outputs", "output_schema", "parameters", "properties", "items",
                      "sample", "samples", "examples", "schema", "json_schema", "response_format"}

SECRET_KEYS = st.sampled_from(["api_key", "apiKey", "token", "password", "client_secret", "key", "access_key"])


@settings(max_examples=_examples_or(200), deadline=None, suppress_health_check=_SLOW)
@given(st.sampled_from(range(len(EXAMPLE_DATA))), st.data())
def test_a_literal_credential_anywhere_never_reaches_a_persona_file(tmp_path_factory, index, data):
    """A credential-named entry with a literal value, put into any mapping of a real file, is dropped."""
    import copy

    format, name, original = EXAMPLE_DATA[index]
    document = copy.deepcopy(original)
    mappings = [path for path in _paths(document)
                if isinstance(_at(document, path), dict) and not set(map(str, path)) & _DATA_NOT_SETTINGS]
    target = _at(document, data.draw(st.sampled_from(mappings)))
    target[data.draw(SECRET_KEYS)] = "sk-INJECTED-0123456789"
    folder = tmp_path_factory.mktemp("keyed")
    (folder / name).write_text(json.dumps(document, default=str), encoding="utf-8")
    try:
        result = interop.load(format, folder / name)
    except ProfilesError as error:
        assert "sk-INJECTED" not in str(error)
        return
    for persona in result.personas:
        assert "sk-INJECTED" not in persona.to_yaml()


def _at(document, path):
    for part in path:
        document = document[part]
    return document
