"""Round trips: import, export, import gives the same persona; every exported file loads in its own tool.

The other tools' own loaders read only files this project wrote, never the bundled examples:
those loaders follow code references and expand aliases, which is why the importers do not use them.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profiles import interop, load_profile
from profiles.errors import ExportError
from profiles.interop.exporter import write as export

from .conftest import EXAMPLES, comparable
from .strategies import OBJECT_SCHEMAS

ROUND_TRIPS = [
    ("crewai", EXAMPLES / "crewai" / "research_crew"),
    ("crewai", EXAMPLES / "crewai" / "support_crew"),
    ("crewai", EXAMPLES / "crewai" / "content_crew"),
    *[("prompty", path) for path in sorted((EXAMPLES / "prompty" / "v2").glob("*.prompty"))],
    *[("agentspec", path) for path in sorted((EXAMPLES / "agentspec").iterdir())],
    ("adk", EXAMPLES / "google_adk" / "support_desk"),
    ("adk", EXAMPLES / "google_adk" / "research_assistant"),
    ("adk", EXAMPLES / "google_adk" / "minimal_local"),
]


def _export(format: str, personas: list, folder: Path) -> list[Path]:
    """Write the personas' export into `folder` (a crew at once; one folder per persona otherwise)."""
    written = []
    if format == "crewai":
        files, _ = export([persona.config for persona in personas], "crewai")
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
        return [folder / "agents.yaml"]
    for index, persona in enumerate(personas):
        target = folder / str(index)
        target.mkdir()
        files, _ = export(persona.config, format)
        for name, text in files.items():
            (target / name).write_text(text, encoding="utf-8")
            written.append(target / name)
    return written


@pytest.mark.parametrize("format,source", ROUND_TRIPS, ids=lambda value: getattr(value, "name", value))
def test_import_export_import_gives_the_same_persona(tmp_path, format, source):
    first = interop.load(format, source).personas
    again = []
    for path in _export(format, first, tmp_path):
        again += interop.load(format, path).personas
    expected = [comparable(persona.data) for persona in first]
    for data in expected:  # an ADK agent's sub-agents are personas of their own; its export says it leaves them out
        data.get("metadata", {}).get("adk", {}).pop("sub_agents", None)
    assert [comparable(persona.data) for persona in again] == expected


@pytest.mark.parametrize("path", sorted((EXAMPLES / "prompty" / "v1").glob("*.prompty")), ids=lambda p: p.name)
def test_prompty_v1_is_written_as_v2_and_then_stays(tmp_path, path):
    """A v1 file exports as v2; from then on import and export agree; only v1 settings v2 lacks are left out."""
    for source in path.parent.iterdir():
        shutil.copy(source, tmp_path / source.name)
    first = interop.load("prompty", tmp_path / path.name).personas[0]
    folders = [tmp_path / "a", tmp_path / "b"]
    for folder in folders:
        folder.mkdir()
    (second_path,) = _export("prompty", [first], folders[0])
    second = interop.load("prompty", second_path).personas[0]
    (third_path,) = _export("prompty", [second], folders[1])
    third = interop.load("prompty", third_path).personas[0]
    assert comparable(third.data) == comparable(second.data)
    before, after = comparable(first.data), comparable(second.data)
    assert {key for key in before if before[key] != after.get(key)} <= {"metadata"}
    for key in set(before["metadata"]["prompty"]["model"]) - set(after["metadata"]["prompty"]["model"]):
        assert any(f"model.{key}" in note.message for note in first.notes), key


def _messages(profile, inputs):
    return [(message["role"], " ".join(message["content"].split())) for message in profile.format_messages(**inputs)]


@pytest.mark.parametrize("path", sorted((EXAMPLES / "prompty").rglob("*.prompty")), ids=lambda p: p.name)
def test_exported_prompty_prepares_the_same_messages_in_prompty(tmp_path, monkeypatch, path):
    """prompty 2 loads the exported file and renders the messages the persona renders."""
    import prompty

    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-local-test")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://example-resource.openai.azure.com")
    monkeypatch.setenv("LOCAL_LLM_ENDPOINT", "http://127.0.0.1:9/v1")  # prepare() sends nothing
    persona = interop.load("prompty", path).personas[0]
    (written,) = _export("prompty", [persona], tmp_path)
    agent = prompty.load(written)
    inputs = {**{name: spec.default for name, spec in persona.config.inputs.items() if spec.has_default},
              **persona.config.samples}
    inputs.setdefault("question", "What now?")
    ours = _messages(persona.config.create_profile(), inputs)
    theirs = [(message.role, " ".join(message.text.split())) for message in prompty.prepare(agent, inputs=inputs)]
    assert theirs == ours


@pytest.mark.parametrize("path", sorted((EXAMPLES / "agentspec").iterdir()), ids=lambda p: p.name)
def test_exported_agentspec_deserializes(tmp_path, path):
    from pyagentspec.serialization import AgentSpecDeserializer

    persona = interop.load("agentspec", path).personas[0]
    (written,) = _export("agentspec", [persona], tmp_path)
    agent = AgentSpecDeserializer().from_json(written.read_text(encoding="utf-8"))
    assert agent.name == persona.config.create_profile().get_name()
    renamed = persona.data["metadata"]["imported"].get("renamed", {})
    expected = re.sub(r"\{\{ (\w+) \}\}", lambda match: "{{" + renamed.get(match.group(1), match.group(1)) + "}}",
                      persona.data["templates"]["system"]["inline"])
    assert agent.system_prompt == expected
    assert [prop.title for prop in agent.inputs] == [renamed.get(name, name) for name in persona.config.inputs]
    assert agent.llm_config.model_id == persona.config.create_profile().get_model()


@pytest.mark.parametrize("folder", ["support_desk", "research_assistant", "minimal_local"])
def test_exported_adk_configs_load_in_adk(tmp_path, folder):
    from google.adk.agents import config_agent_utils

    for persona in interop.load("adk", EXAMPLES / "google_adk" / folder).personas:
        target = tmp_path / persona.stem
        target.mkdir()
        files, _ = export(persona.config, "adk", model=None if persona.config.model else "gemini-2.5-flash")
        (target / "root_agent.yaml").write_text(files["root_agent.yaml"], encoding="utf-8")
        agent = config_agent_utils.from_config(str(target / "root_agent.yaml"))
        assert agent.name == persona.data["metadata"]["imported"]["id"]
        assert "{" not in agent.instruction or re.search(r"\{[a-z_:?.]+\}", agent.instruction)


PERSONAS = sorted((Path(__file__).resolve().parent.parent.parent / "profile_configs").glob("*.yaml"))


@pytest.mark.parametrize("path", PERSONAS, ids=lambda p: p.name)
def test_bundled_personas_export_to_files_each_tool_loads(tmp_path, monkeypatch, path):
    """The project's own personas export to every format, and each tool loads what was written."""
    import prompty
    from google.adk.agents import config_agent_utils
    from pyagentspec.serialization import AgentSpecDeserializer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test")
    config = load_profile(path)
    variables = {name: spec.examples[0] for name, spec in config.inputs.items() if spec.examples}
    variables.update({key: value for key, value in config.samples.items() if not isinstance(value, dict)})
    files, _ = export(config, "prompty")
    (name, text), = files.items()
    (tmp_path / name).write_text(text, encoding="utf-8")
    prepared = prompty.prepare(prompty.load(tmp_path / name), inputs={"question": "Plan a trip", **variables})
    ours = config.create_profile().format_messages("Plan a trip", **variables)
    assert [" ".join(m.text.split()) for m in prepared] == [" ".join(m["content"].split()) for m in ours]
    files, _ = export(config, "agentspec", model="gpt-4o-mini")
    agent = AgentSpecDeserializer().from_json(next(iter(files.values())))
    assert agent.name == config.create_profile().get_name()
    files, _ = export(config, "adk", model="gemini-2.5-flash")
    (tmp_path / "root_agent.yaml").write_text(files["root_agent.yaml"], encoding="utf-8")
    adk_agent = config_agent_utils.from_config(str(tmp_path / "root_agent.yaml"))
    assert config.create_profile().get_name() in adk_agent.instruction.splitlines()[0]
    files, _ = export([config], "crewai")
    assert set(files) == {"agents.yaml", "tasks.yaml"}


def test_secrets_are_written_as_references_never_values(tmp_path, monkeypatch, write):
    """A secret field becomes a placeholder (Prompty: an input defaulting to ${env:KEY}); its value never appears."""
    monkeypatch.setenv("SUPPORT_DESK_TOKEN", "tok-very-secret-123")
    path = write(
        "desk.yaml",
        "name: Ada\nrole: Support\ngoal: 'Quote the desk code {{ desk_code }}'\ninputs: {desk_code: string}\n"
        "expand_prompt: {key: SUPPORT_DESK_TOKEN, provider: env}\nallow_secrets: [expand_prompt]\n",
    )
    assert "tok-very-secret-123" in load_profile(path).create_profile().format_system_prompt(desk_code="7")
    for format in ("prompty", "crewai"):
        files, _ = export(path, format) if format == "prompty" else export([path], format)
        text = "".join(files.values())
        assert "tok-very-secret-123" not in text
    files, _ = export(path, "prompty")
    assert "default: ${env:SUPPORT_DESK_TOKEN}" in next(iter(files.values()))
    with pytest.raises(ExportError) as caught:
        export(path, "agentspec", model="m")
    assert "secret" in str(caught.value) and "tok-very-secret-123" not in str(caught.value)


def test_a_literal_placeholder_cannot_go_to_crewai_or_adk(write):
    """CrewAI and ADK would fill a literal {first_name}; the export refuses it instead of writing it."""
    path = write("p.yaml", "name: Ada\nrole: Clerk\ngoal: \"Greet users as {% raw %}{first_name}{% endraw %}\"\n")
    for format, options in (("crewai", {}), ("adk", {"model": "gemini-2.5-flash"})):
        with pytest.raises(ExportError) as caught:
            export([path] if format == "crewai" else path, format, **options)
        assert "{first_name}" in str(caught.value) and "escape" in str(caught.value)
    files, _ = export(path, "prompty")
    assert "Greet users as {first_name}" in next(iter(files.values()))


def test_a_placeholder_in_a_filter_is_refused(write):
    path = write("p.yaml", "name: Ada\nrole: Clerk\ninputs: {topic: string}\ngoal: 'Study {{ topic | upper }}'\n")
    with pytest.raises(ExportError) as caught:
        export(path, "agentspec", model="m")
    assert "'topic' through the filter 'upper'" in str(caught.value)
    assert "--var" not in str(caught.value)  # `profiles export` has no such option
    with pytest.raises(ExportError) as caught:
        export([path], "crewai")
    assert str(caught.value).endswith("or give it a value under 'variables:', which crewai gets written in")


def test_a_secret_the_bundled_template_tests_says_what_to_change(write, monkeypatch):
    """A secret goal stays a placeholder, which the default template's `retry_goal if … else goal` cannot keep:
    the error names the secret by its source and what to change, never an option export lacks, nor the value."""
    monkeypatch.setenv("SUPPORT_GOAL_TOKEN", "tok-very-secret-456")
    path = write("p.yaml", "name: Ada\nrole: Clerk\ngoal: {key: SUPPORT_GOAL_TOKEN, default: Help}\n")
    with pytest.raises(ExportError) as caught:
        export(path, "prompty")
    message = str(caught.value)
    assert "field 'goal' is a secret (env:SUPPORT_GOAL_TOKEN), which is exported as a placeholder" in message
    assert "prints it as {{ goal }}" in message and "--var" not in message and "tok-very-secret-456" not in message


def test_braces_in_plain_fields_stay_text_both_ways(tmp_path):
    """A description with {{ braces }} is text in Agent Spec: it imports as text and exports back the same."""
    source = tmp_path / "a.json"
    source.write_text('{"component_type": "Agent", "name": "Ada {{x}}", "description": "Reply as {% raw %} {{ x }}",'
                      ' "system_prompt": "Hi", "llm_config": {"component_type": "OpenAiConfig", "name": "m",'
                      ' "model_id": "m"}}')
    (persona,) = interop.load("agentspec", source).personas
    profile = persona.config.create_profile().with_templates(system="{{ name }}: {{ goal }}")
    assert profile.format_system_prompt() == "Ada {{x}}: Reply as {% raw %} {{ x }}"
    files, _ = export(persona.config, "agentspec")
    written = json.loads(next(iter(files.values())))
    assert written["description"] == "Reply as {% raw %} {{ x }}" and written["name"] == "Ada {{x}}"


RICH_SCHEMA_PERSONA = """\
name: 小明
role: 翻译助手
goal: 把用户的问题翻译成英文。
model: gpt-4o
tools:
  - name: lookup
    description: Look a word up.
    parameters:
      type: object
      properties:
        word: {type: string, description: the word}
        limit: {type: integer, minimum: 1}
        senses: {type: array, items: {type: object, properties: {gloss: {type: string}}}}
      required: [word]
output_schema:
  name: translation
  strict: false
  schema:
    type: object
    properties:
      text: {type: string, minLength: 1}
      notes: {type: array, items: {type: object, properties: {n: {type: integer}}}}
      meta: {type: object, properties: {score: {type: number, maximum: 1}}, required: [score]}
    required: [text]
"""


@pytest.mark.parametrize("format", ["prompty", "agentspec"])
def test_a_persona_exported_and_imported_keeps_its_output_schema_and_tools(tmp_path, write, format):
    """Outputs and tools the format's own fields cannot hold (a nested property, a minimum, an optional
    parameter, the schema's name) are kept whole in metadata.agent_profiles and come back on import."""
    config = load_profile(write("p.yaml", RICH_SCHEMA_PERSONA))
    files, _ = export(config, format)
    ((name, text),) = files.items()
    (tmp_path / name).write_text(text, encoding="utf-8")
    (again,) = interop.load(format, tmp_path / name).personas
    before, after = config.create_profile(), again.config.create_profile()
    assert after.output_schema.as_dict() == before.output_schema.as_dict()
    assert (after.output_schema.name, after.output_schema.strict) == ("translation", False)
    assert [dict(tool.parameters) for tool in after.tools] == [dict(tool.parameters) for tool in before.tools]
    assert after.tools[0].parameters["required"] == ["word"]


def test_an_optional_input_with_a_default_is_written_in_where_the_format_has_no_defaults(write):
    """CrewAI fails a kickoff that lacks an input, and ADK's {name?} puts nothing where it is missing:
    an optional input's default is written in, as the persona renders it; an empty one stays {name?}."""
    path = write("p.yaml", "name: Ada\nrole: Clerk\ngoal: 'Greet {{ audience }}{{ suffix }}'\n"
                 "inputs:\n  audience: {type: string, default: 普通读者, required: false}\n"
                 "  suffix: {type: string, default: '', required: false}\n")
    assert load_profile(path).create_profile().format_system_prompt().count("Greet 普通读者") == 1
    files, _ = export([path], "crewai")
    assert "Greet 普通读者" in files["agents.yaml"] and "{audience}" not in files["agents.yaml"]
    files, _ = export(path, "adk", model="gemini-2.5-flash")
    assert "Greet 普通读者{suffix?}" in files["root_agent.yaml"]


def test_a_secret_name_makes_no_id_file_name_or_text_of_an_export(write, monkeypatch):
    """A secret name is never the agent's id (CrewAI, ADK), the file's name (Prompty) or its
    backstory: each gets a plain id, and the text reads the name through a placeholder."""
    monkeypatch.setenv("AGENT_NAME_TOKEN", "TopSecretValue42")
    path = write("s.yaml", "name: {key: AGENT_NAME_TOKEN, default: Ada, secret: true}\nrole: Summarizer\n"
                 "model: gpt-4o\n")
    outputs = {"prompty": export(path, "prompty"), "adk": export(path, "adk"), "crewai": export([path], "crewai")}
    for format, (files, notes) in outputs.items():
        text = "".join([*files, *files.values(), *(str(note) for note in notes)]).lower()
        assert "topsecretvalue42" not in text, format
    assert "backstory: You are {name}." in outputs["crewai"][0]["agents.yaml"]
    assert "name: agent\n" in outputs["adk"][0]["root_agent.yaml"]
    assert "default: ${env:AGENT_NAME_TOKEN}" in outputs["prompty"][0]["persona.prompty"]


def test_adk_keeps_a_name_that_is_an_identifier_and_says_when_it_changes_one(write, tmp_path):
    """ADK's agent name takes any identifier (Iris, 小明): it is written as it is and imports back;
    a name with spaces is written as an identifier, with a note."""
    for name, written in (("Iris", "Iris"), ("小明", "小明"), ("Support Bot", "support_bot")):
        path = write("p.yaml", f"name: {name}\nrole: Clerk\nmodel: gemini-2.5-flash\n")
        files, notes = export(path, "adk")
        assert f"\nname: {written}\n" in files["root_agent.yaml"]
        assert any(f"written as the agent name '{written}'" in str(note) for note in notes) == (name != written)
        (tmp_path / "root_agent.yaml").write_text(files["root_agent.yaml"], encoding="utf-8")
        (again,) = interop.load("adk", tmp_path / "root_agent.yaml").personas
        assert again.config.create_profile().get_name() == written


def test_a_line_prompty_would_take_for_a_role_marker_is_refused(write, tmp_path, monkeypatch):
    """Prompty splits the rendered body at any line that is only a role and a colon ('User:', '# assistant:'),
    and has no escape: such a line in a persona's text would send other messages than the persona, so the
    export refuses it, naming the line; with the text after the colon it is no marker and is written."""
    import prompty

    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test")  # prompty.load resolves the connection's ${env:…}
    path = write("p.yaml", "name: Ada\nrole: Tutor\nmodel: gpt-4o\nexamples: \"Q&A:\\nUser:\\nWhat is 2+2?\\n\"\n")
    with pytest.raises(ExportError) as caught:
        export(path, "prompty")
    assert "the line 'User:'" in str(caught.value) and "new user message" in str(caught.value)
    ok = write("q.yaml", "name: Ada\nrole: Tutor\nmodel: gpt-4o\nexamples: \"User: What is 2+2?\\nassistant: 4\"\n")
    files, _ = export(ok, "prompty")
    ((name, text),) = files.items()
    (tmp_path / name).write_text(text, encoding="utf-8")
    sent = prompty.prepare(prompty.load(tmp_path / name), inputs={"question": "Q"})
    assert [message.role for message in sent] == ["system", "user"]


def test_an_adk_description_with_braces_exports_back_as_written(tmp_path):
    """ADK fills session state into instructions only; a description reading 'Helps {user:name}.' is text,
    imported as text, and exported back as it was instead of refused as a placeholder ADK would fill."""
    (tmp_path / "root_agent.yaml").write_text(
        "agent_class: LlmAgent\nname: helper\nmodel: gemini-2.5-flash\ndescription: Helps {user:name}.\n"
        "instruction: Answer about {topic}.\n", encoding="utf-8")
    (persona,) = interop.load("adk", tmp_path / "root_agent.yaml").personas
    assert persona.config.create_profile().get_goal() == "Helps {user:name}."
    files, _ = export(persona.config, "adk")
    assert "\ndescription: Helps {user:name}.\n" in files["root_agent.yaml"]
    assert "instruction: Answer about {topic}." in files["root_agent.yaml"]


@pytest.mark.parametrize("format", ["crewai", "prompty"])
def test_an_empty_list_of_personas_is_an_export_error(format):
    """No persona writes no crew of nothing (CrewAI's agents.yaml as {}) and is not 'one at a time'."""
    with pytest.raises(ExportError) as caught:
        export([], format)
    assert "no persona to export" in str(caught.value)


@settings(max_examples=40, deadline=None)
@given(schema=OBJECT_SCHEMAS, parameters=OBJECT_SCHEMAS, format=st.sampled_from(["prompty", "agentspec"]))
def test_any_output_schema_and_tool_parameters_survive_an_export_and_import(tmp_path_factory, schema, parameters,
                                                                           format):
    """Whatever the schema (nested objects, arrays of them, bounds, optional properties), exporting a
    persona and importing the file gives its output schema and its tool's parameters back unchanged."""
    from profiles import ProfileConfig

    config = ProfileConfig(name="Ada", role="Clerk", model="gpt-4o", output_schema={"schema": schema, "name": "out"},
                           tools=[{"name": "look", "description": "Look it up.", "parameters": parameters}])
    before = config.create_profile()
    files, _ = export(config, format)
    ((name, text),) = files.items()
    folder = tmp_path_factory.mktemp("export")
    (folder / name).write_text(text, encoding="utf-8")
    (again,) = interop.load(format, folder / name).personas
    after = again.config.create_profile()
    assert after.output_schema.as_dict() == before.output_schema.as_dict()
    assert (after.output_schema.name, after.output_schema.strict) == ("out", before.output_schema.strict)
    assert [dict(tool.parameters) for tool in after.tools] == [dict(tool.parameters) for tool in before.tools]


@pytest.mark.parametrize("format", ["prompty", "agentspec"])
def test_an_output_schema_that_is_no_object_is_kept_in_metadata_and_comes_back(write, tmp_path, format):
    """An array schema has no place in the outputs: the note says where it went, and an import brings it back."""
    path = write("p.yaml", "name: A\nrole: B\nmodel: gpt-4o\noutput_schema:\n  type: array\n  items: {type: string}\n")
    files, notes = export(path, format)
    assert any("kept under metadata.agent_profiles" in note.message for note in notes)
    ((name, text),) = files.items()
    (tmp_path / name).write_text(text, encoding="utf-8")
    (again,) = interop.load(format, tmp_path / name).personas
    assert again.config.create_profile().output_schema.as_dict() == {"type": "array", "items": {"type": "string"}}


@pytest.mark.parametrize("format", ["prompty", "agentspec"])
def test_the_retry_goal_and_constraints_come_back_from_an_export(write, tmp_path, format):
    """Written under metadata.agent_profiles, but left out of the imported persona: lost silently."""
    path = write("p.yaml", "name: Ada\nrole: Planner\nmodel: gpt-4o\nretry_goal: Try again.\n"
                 "retry_constraints: [Be exact.]\n")
    files, _ = export(path, format)
    ((name, text),) = files.items()
    (tmp_path / name).write_text(text, encoding="utf-8")
    (again,) = interop.load(format, tmp_path / name).personas
    profile = again.config.create_profile()
    assert (profile.values["retry_goal"], profile.get_retry_constraints()) == ("Try again.", ["Be exact."])


OWN_KINDS_PERSONA = """\
name: Ada
role: Planner
model: gpt-4o
kinds: [users]
templates:
  plan: {inline: "Plan the steps for {{ question }}."}
  users: {inline: "Answer for every user."}
  review: {inline: "Review the plan for {{ question }}."}
messages:
  - {kind: system}
  - {kind: plan, role: developer}
  - {kind: users, role: assistant}
  - {history: true}
  - {kind: user}
"""


def test_a_prompty_round_trip_keeps_the_persona_s_own_prompt_kinds(write, tmp_path):
    """Prompty sections have roles, not kinds: an import named them turn_2, turn_3, so
    format_prompt("plan") failed afterwards, and a kind sent as no message (review) was lost."""
    config = load_profile(write("p.yaml", OWN_KINDS_PERSONA))
    files, _ = export(config, "prompty")
    ((name, text),) = files.items()
    (tmp_path / name).write_text(text, encoding="utf-8")
    (again,) = interop.load("prompty", tmp_path / name).personas
    before, after = config.create_profile(), again.config.create_profile()
    for kind in ("plan", "users", "review"):
        assert after.format_prompt(kind, question="Q") == before.format_prompt(kind, question="Q")
    assert [slot.kind for slot in after.layout] == ["system", "plan", "users", None, "user"]
    history = [{"role": "user", "content": "Hi"}]
    assert after.format_messages(question="Q", history=history) == before.format_messages(question="Q",
                                                                                             history=history)
    assert again.config.kinds == ("users",)
    files_again, _ = export(again.config, "prompty")
    assert files_again == files  # and the next round trip writes the same file


def test_prompty_kinds_named_as_an_import_names_them_keep_no_extra_metadata(write):
    files, _ = export(write("p.yaml", "name: Ada\nrole: Planner\nmodel: gpt-4o\n"), "prompty")
    ((text),) = files.values()
    assert "message_kinds" not in text and "agent_profiles:\n    role: Planner\nmodel:" in text


WHITESPACE_TEMPLATE = (
    "{% if tier %}\nPlan: {{ tier }}\n{% endif %}\nItems:\n  {% for item in items %}\n  - {{ item }}\n"
    "  {% endfor %}\n{# a note #}\nTicket: {{ ticket }}\n\n{% if ticket %}\n\n  Thanks.\n{% endif %}\n"
)


def test_block_tags_on_lines_of_their_own_render_the_same_text_in_prompty(write, tmp_path, monkeypatch):
    """The sandbox trims the line a block tag stands on (trim_blocks, lstrip_blocks); Prompty's stock Jinja
    keeps it: a persona's template copied into a .prompty sends exactly the persona's text, and a .prompty
    imported renders exactly what Prompty sends."""
    import prompty
    import yaml

    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test")
    inputs = {"tier": {"type": "string", "default": "pro"}, "items": {"type": "array", "default": ["a", "b"]},
              "ticket": {"type": "string"}}
    persona = {"name": "Ada", "role": "Clerk", "model": "gpt-4o", "inputs": inputs,
               "templates": {"user": {"inline": WHITESPACE_TEMPLATE}}}
    path = write("p.yaml", yaml.safe_dump(persona))
    ours = load_profile(path).create_profile().format_messages(ticket="T")[-1]["content"]
    files, _ = export(path, "prompty")
    ((name, text),) = files.items()
    (tmp_path / name).write_text(text, encoding="utf-8")
    sent = prompty.prepare(prompty.load(tmp_path / name), inputs={"ticket": "T"})
    assert sent[-1].text == ours
    source = tmp_path / "stock.prompty"
    source.write_text("---\nname: stock\nmodel:\n  id: gpt-4o\ninputs:\n  tier: {kind: string, default: pro}\n"
                      "  items: {kind: array, default: [a, b], items: {kind: string}}\n  ticket: {kind: string}\n"
                      "---\nuser:\n" + WHITESPACE_TEMPLATE, encoding="utf-8")
    theirs = prompty.prepare(prompty.load(source), inputs={"ticket": "T"})[-1].text
    (imported,) = interop.load("prompty", source).personas
    assert imported.config.create_profile().format_messages(ticket="T")[-1]["content"] == theirs


def test_prompty_sends_the_tool_the_persona_has_and_an_import_takes_the_tool_prompty_sends(tmp_path, monkeypatch):
    """Prompty takes a parameter without `required: true` as optional (unless the tool is strict): the export
    says `required` of every parameter, so Prompty sends the persona's tool, and an import of a file that does
    not say it gives the tool Prompty sends."""
    import prompty
    from prompty.providers.openai.executor import _tools_to_wire

    from profiles import ProfileConfig

    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test")
    parameters = {"type": "object", "properties": {"word": {"type": "string"}, "n": {"type": "number"}},
                  "required": ["word"]}
    config = ProfileConfig(name="Ada", role="Clerk", model="gpt-4o",
                           tools=[{"name": "look", "description": "Look it up.", "parameters": parameters}])
    files, _ = export(config, "prompty")
    ((name, text),) = files.items()
    (tmp_path / name).write_text(text, encoding="utf-8")
    (sent,) = _tools_to_wire(prompty.load(tmp_path / name))
    assert sent["function"]["parameters"] == parameters
    (tmp_path / "real.prompty").write_text(
        "---\nname: real\nmodel: gpt-4o\ntools:\n  - name: look\n    kind: function\n    description: Look.\n"
        "    parameters:\n      - {name: word, kind: string, required: true}\n      - {name: n, kind: number}\n"
        "---\nsystem:\nHelp.\n", encoding="utf-8")
    (persona,) = interop.load("prompty", tmp_path / "real.prompty").personas
    (sent,) = _tools_to_wire(prompty.load(tmp_path / "real.prompty"))
    assert dict(persona.config.create_profile().tools[0].parameters) == sent["function"]["parameters"] == parameters


def test_model_settings_extra_is_written_or_said_to_be_left_out(write):
    """A persona's provider options (model_settings.extra) went nowhere without a word in Agent Spec, ADK and
    CrewAI exports: Agent Spec's generation config takes keys of any name and gets them (pyagentspec reads
    them back); ADK and CrewAI have no place for them and say so."""
    from pyagentspec.serialization import AgentSpecDeserializer

    path = write("p.yaml", "name: Ada\nrole: Clerk\nmodel: gpt-4o\nmodel_settings:\n  temperature: 0.3\n"
                 "  extra: {reasoning_effort: low, logit_bias: {'50256': -100}}\n")
    files, _ = export(path, "agentspec")
    agent = AgentSpecDeserializer().from_json(next(iter(files.values())))
    parameters = agent.llm_config.default_generation_parameters.model_dump()
    assert parameters["reasoning_effort"] == "low" and parameters["logit_bias"] == {"50256": -100}
    assert parameters["temperature"] == 0.3
    scoped = write("q.yaml", "name: Ada\nrole: Clerk\nmodel: gpt-4o\nmodel_settings:\n"
                   "  extra: {openai-chat: {max_tokens: 400}}\n")
    for format in ("prompty", "agentspec"):  # options for one API's requests: no place in either
        _, notes = export(scoped, format)
        assert any("model_settings.extra.openai-chat not written" in note.message for note in notes), format
    for format, persona in (("adk", path), ("crewai", [path])):
        files, notes = export(persona, format)
        assert "reasoning_effort" not in "".join(files.values())
        assert any(note.kind == "dropped" and "model_settings.extra.reasoning_effort not written" in note.message
                   for note in notes), format


def test_fields_adk_and_crewai_have_no_place_for_are_listed_as_left_out(write):
    """README: fields the format has no place for are, for CrewAI and ADK, listed as left out. The retry
    goal and constraints, samples, the persona's own metadata and a prompt kind no message sends went
    without a word; each is listed now, and a persona without them gets no such note."""
    path = write("p.yaml", "name: Ada\nrole: Clerk\ngoal: File {{ topic }} things.\nmodel: gpt-4o\n"
                 "retry_goal: Try again.\nretry_constraints: [Be exact.]\ninputs: {topic: {type: string}}\n"
                 "samples: {topic: tax}\nmetadata: {team: billing}\n"
                 "templates:\n  plan: {inline: 'Plan {{ topic }}.'}\n")
    plain = write("q.yaml", "name: Ada\nrole: Clerk\nmodel: gpt-4o\n")
    for format, persona, bare in (("adk", path, plain), ("crewai", [path], [plain])):
        _, notes = export(persona, format)
        fields = {"retry_goal", "retry_constraints", "samples", "metadata", "the plan prompt is"}
        left = {note.message.split(" not written")[0] for note in notes if note.kind == "dropped"}
        assert fields <= left, format
        _, notes = export(bare, format)
        assert not fields & {note.message.split(" not written")[0] for note in notes}, format


def test_wrong_paths_and_options_are_profiles_errors():
    """interop.load given a path of no path type, and interop.export given an option its format does not
    take (CrewAI's write has none: base_url=… was a TypeError) or a base_url that is no text, say so as
    ConfigError and ExportError, instead of TypeError or a JSON url of 5."""
    from profiles.errors import ConfigError

    for path in (None, 5, b"agents.yaml"):
        with pytest.raises(ConfigError) as caught:
            interop.load("crewai", path)
        assert "must be text or a pathlib.Path" in str(caught.value)
    persona = Path(__file__).resolve().parents[2] / "profile_configs" / "triage.yaml"
    with pytest.raises(ExportError) as caught:
        interop.export([persona], "crewai", base_url="http://127.0.0.1:9/v1")
    assert "crewai takes no option 'base_url'; the options are deployment, language, model" in str(caught.value)
    with pytest.raises(ExportError) as caught:
        interop.export(persona, "prompty", base_ur="http://127.0.0.1:9/v1")
    assert "no option 'base_ur'" in str(caught.value)
    with pytest.raises(ExportError) as caught:
        interop.export(persona, "agentspec", base_url=5)
    assert "base_url must be text, got int" in str(caught.value)
    assert interop.export(persona, "agentspec", base_url="http://127.0.0.1:9/v1")
