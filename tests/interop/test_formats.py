"""Prompty, Semantic Kernel, Google ADK and Agent Spec files become personas that say what the files said."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from profiles import ConfigError, interop
from profiles.check import check_paths

from .conftest import EXAMPLES


def _write_all(result, folder):
    for persona in result.personas:
        (folder / f"{persona.stem}.yaml").write_text(persona.to_yaml(), encoding="utf-8")


# Prompty ---------------------------------------------------------------------------------------


def test_prompty_v1_sections_inputs_samples_and_settings():
    (persona,) = interop.load("prompty", EXAMPLES / "prompty" / "v1" / "basic.prompty").personas
    config = persona.config
    assert config.model_settings.temperature == 0.2 and config.model_settings.max_tokens == 128
    assert config.inputs["firstName"].default == "Jane" and config.samples["question"] == "What is the meaning of life?"
    profile = config.create_profile()
    assert profile.get_model() == "gpt-4o-mini" and profile.get_role() == "Basic Prompt"
    assert profile.provenance["role"].endswith("(derived: role)")
    messages = profile.format_messages("Why is the sky blue?", firstName="Ada", lastName="King")
    assert [message["role"] for message in messages] == ["system", "user"]
    assert "You are helping Ada King to find answers" in messages[0]["content"]
    assert messages[1]["content"] == "Why is the sky blue?"
    connection = persona.data["metadata"]["prompty"]["model"]["connection"]
    assert connection == {"kind": "key", "endpoint": "${env:AZURE_OPENAI_ENDPOINT}",
                          "apiKey": "${env:AZURE_OPENAI_API_KEY}"}


def test_prompty_history_loop_becomes_the_history_slot_and_file_sample_is_read():
    """The chat_history loop is where the conversation goes; sample: ${file:…} is read inside the folder."""
    (persona,) = interop.load("prompty", EXAMPLES / "prompty" / "v1" / "chat_openai.prompty").personas
    assert "chat_history" not in persona.config.inputs and "chat_history" not in persona.config.samples
    assert persona.config.samples["customer"]["firstName"] == "Sarah"
    profile = persona.config.create_profile()
    history = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello Sarah"}]
    samples = {key: value for key, value in persona.config.samples.items() if key != "question"}
    messages = profile.format_messages("Is it waterproof?", history=history, **samples)
    assert [message["role"] for message in messages] == ["system", "user", "assistant", "user"]
    assert "catalog: 1" in messages[0]["content"] and "name: TrailMaster X4 Tent" in messages[0]["content"]
    assert messages[-1]["content"] == "Is it waterproof?"


def test_prompty_mustache_body_and_outputs():
    (persona,) = interop.load("prompty", EXAMPLES / "prompty" / "v1" / "grader_mustache.prompty").personas
    profile = persona.config.create_profile()
    assert profile.output_schema.as_dict()["properties"] == {"score": {"type": "number",
                                                                       "description": "Relevance from 1 to 5"}}
    user = profile.format_user_prompt(question="Q?", answer="A.")
    assert user == "Question: Q?\nAnswer: A.\nScore:"
    assert '{"score": 5} is an example' in profile.format_system_prompt()
    assert profile.parse_reply('{"score": 4}') == {"score": 4}


def test_prompty_v2_renames_thread_tools_and_options():
    greeting = interop.load("prompty", EXAMPLES / "prompty" / "v2" / "greeting.prompty").personas[0]
    assert greeting.data["metadata"]["imported"]["renamed"] == {"name_input": "name", "language_input": "language"}
    assert greeting.config.create_profile().format_user_prompt() == "Say hello to World."
    thread = interop.load("prompty", EXAMPLES / "prompty" / "v2" / "local_ollama_thread.prompty").personas[0]
    assert "conversation" not in thread.config.inputs and "messages" not in thread.data
    weather = interop.load("prompty", EXAMPLES / "prompty" / "v2" / "structured_weather.prompty").personas[0]
    (tool,) = weather.config.tools
    assert tool.name == "get_weather" and tool.parameters["properties"]["unit"]["enum"] == ["celsius", "fahrenheit"]
    assert list(weather.config.model_settings.stop) == ["###"]
    assert weather.config.model_settings.extra == {"parallel_tool_calls": False}
    request = weather.config.create_profile().to_request("Weather in Oslo?")
    assert request["parallel_tool_calls"] is False and request["seed"] == 7
    assert request["response_format"]["json_schema"]["schema"]["required"] == ["city", "temperature"]


def test_imported_prompty_files_pass_check(tmp_path):
    """Where a Prompty file gives samples or defaults for its inputs, check passes on the result.

    local_ollama_thread.prompty declares `question` without a sample: check asks for that, nothing else.
    """
    for folder in ("v1", "v2"):
        _write_all(interop.load("prompty", EXAMPLES / "prompty" / folder), tmp_path)
    report = check_paths([tmp_path])
    assert len(report.checked) == 5
    assert {issue.file for issue in report.issues} == {str(tmp_path / "local_chat.yaml")}
    assert all("input 'question' is required" in issue.message for issue in report.issues)


# Semantic Kernel -------------------------------------------------------------------------------


def test_semantic_kernel_prompt_without_messages_is_one_user_message():
    (persona,) = interop.load("semantic-kernel", EXAMPLES / "semantic_kernel" / "prompts" / "summarize.yaml").personas
    profile = persona.config.create_profile()
    messages = profile.format_messages(input="Q3 revenue rose 4%.")
    assert messages == [{"role": "user", "content": profile.format_user_prompt(input="Q3 revenue rose 4%.")}]
    assert "at most 3 sentences, in English." in messages[0]["content"]
    assert persona.config.model_settings.temperature == 0.2 and persona.config.model_settings.max_tokens == 400
    kept = persona.data["metadata"]["semantic-kernel"]["execution_settings"]
    assert set(kept) == {"azure_openai", "ollama"} and kept["ollama"]["model_id"] == "llama3.1:8b"


def test_semantic_kernel_handlebars_and_jinja_messages():
    story = interop.load("semantic-kernel", EXAMPLES / "semantic_kernel" / "prompts" /
                         "generate_story_handlebars.yaml").personas[0]
    profile = story.config.create_profile()
    messages = profile.format_messages(topic="a dog", length=3)
    assert messages[0] == {"role": "system", "content": "You are a storyteller for children aged 8."}
    assert messages[1]["content"] == "Tell a story about a dog that is 3 sentences long."
    assert "moral: be kind" in profile.format_messages(topic="a dog", length=3, moral="be kind")[1]["content"]
    reply = interop.load("semantic-kernel", EXAMPLES / "semantic_kernel" / "prompts" /
                         "support_reply_jinja2.yaml").personas[0]
    history = [{"role": "user", "content": "Earlier"}]
    turns = reply.config.create_profile().format_messages(
        company="Acme", ticket="My invoice is wrong", history=history,
        articles=[{"id": 7, "title": "Invoices", "summary": "How to read one"}],
    )
    assert [turn["role"] for turn in turns] == ["system", "user", "user"]
    assert "- [7] Invoices: How to read one" in turns[0]["content"] and turns[-1]["content"] == "My invoice is wrong"


def test_semantic_kernel_agent_and_prompt_folder(tmp_path):
    agent = interop.load("semantic-kernel", EXAMPLES / "semantic_kernel" / "agents" / "summarizer_agent.yaml")
    profile = agent.personas[0].config.create_profile()
    assert "Answer in English and in at most 200 words." in profile.format_system_prompt()
    assert profile.get_model() == "gpt-4o"
    menu = interop.load("semantic-kernel", EXAMPLES / "semantic_kernel" / "agents" / "menu_agent_tools.yaml")
    assert "tools" not in menu.personas[0].data
    assert any(note.kind == "code" and "MenuPlugin.get_specials" in note.message for note in menu.personas[0].notes)
    story = interop.load("semantic-kernel", EXAMPLES / "semantic_kernel" / "agents" / "story_agent_template.yaml")
    assert story.personas[0].data["metadata"]["semantic-kernel"]["metadata"]["created"] == "2025-02-21"
    folder = interop.load("semantic-kernel", EXAMPLES / "semantic_kernel" / "plugins" / "WriterPlugin")
    poem = folder.personas[0].config.create_profile()
    assert poem.format_user_prompt(input="the sea") == (
        "Write a short poem about the sea in the style of Emily Dickinson.\nKeep it under 8 lines."
    )
    _write_all(agent, tmp_path)
    _write_all(folder, tmp_path)
    assert check_paths([tmp_path / "aristotle.yaml"]).ok


# Google ADK ------------------------------------------------------------------------------------


def test_adk_follows_sub_agents_and_drops_code():
    result = interop.load("adk", EXAMPLES / "google_adk" / "support_desk")
    assert [persona.stem for persona in result.personas] == ["support_coordinator", "billing_agent", "tech_agent"]
    coordinator, billing, tech = result.personas
    assert set(coordinator.config.inputs) == {"app_company_name", "user_display_name", "plan"}
    assert coordinator.config.inputs["plan"].required is False
    system = coordinator.config.create_profile().format_system_prompt(app_company_name="Acme",
                                                                      user_display_name="Li")
    assert "support coordinator for Acme." in system and "their plan is ." in system
    assert '{"route": "billing"}' in system
    assert any(note.kind == "code" and note.message.startswith("before_tool_callbacks") for note in billing.notes)
    messages = tech.config.create_profile().format_messages("It crashes", product_version="2.1")
    assert [message["role"] for message in messages] == ["system", "system", "user"]
    assert messages[1]["content"] == "Product version reported by the customer: 2.1"


def test_adk_workflow_agent_gives_no_persona_but_its_sub_agents_do():
    result = interop.load("adk", EXAMPLES / "google_adk" / "research_assistant" / "root_agent.yaml")
    assert [persona.stem for persona in result.personas] == ["researcher", "writer"]
    assert "SequentialAgent" in result.notes[0].message
    writer = result.personas[1]
    assert writer.data["metadata"]["imported"]["renamed"] == {"artifact_style_guide_md": "artifact.style_guide.md"}


# Agent Spec ------------------------------------------------------------------------------------


def test_agentspec_inputs_outputs_llm_and_tools():
    (persona,) = interop.load("agentspec", EXAMPLES / "agentspec" / "planner_agent.yaml").personas
    profile = persona.config.create_profile()
    assert profile.get_model() == "meta-llama/Meta-Llama-3.1-8B-Instruct"
    assert persona.config.inputs["max_steps"].default == 8
    assert "at most 8 steps" in profile.format_system_prompt(agents="Searcher, Booker")
    assert [tool.name for tool in profile.tools] == ["list_calendars", "estimate_duration", "get_weather"]
    assert any("get_weather" in note.message and "url" in note.message for note in persona.notes)
    assert persona.data["metadata"]["agentspec"]["llm_config"]["url"] == "http://127.0.0.1:8001/v1"
    assert profile.output_schema.as_dict()["properties"]["plan"]["type"] == "array"


def test_agentspec_references_are_resolved():
    (persona,) = interop.load("agentspec", EXAMPLES / "agentspec" / "ollama_assistant_refs.yaml").personas
    assert persona.config.create_profile().get_model() == "llama3.1:8b"
    assert persona.config.model_settings.temperature == 0.7
    assert persona.data["metadata"]["agentspec"]["llm_config"]["default_generation_parameters"] == {"num_ctx": 8192}


@pytest.mark.parametrize("source", ["summarizer_agent.json", "ollama_assistant_refs.yaml"])
def test_imported_agentspec_with_defaults_passes_check(tmp_path, source):
    result = interop.load("agentspec", EXAMPLES / "agentspec" / source)
    _write_all(result, tmp_path)
    shutil.copy(EXAMPLES / "agentspec" / source, tmp_path / "source")
    report = check_paths([tmp_path / f"{result.personas[0].stem}.yaml"])
    if source.startswith("summarizer"):
        assert report.ok, [str(issue) for issue in report.issues]
    else:  # user_name has no default or sample in the file: check asks for exactly that
        assert [issue.message.split("reads input ")[1].split(" ")[0] for issue in report.issues] == ["'user_name'"]


# Prompty v1 `base:` ------------------------------------------------------------------------------

_PARENT = """---
name: Contoso Base
model:
  api: chat
  configuration:
    type: openai
    name: gpt-4o
    api_key: ${env:OPENAI_API_KEY}
  parameters:
    temperature: 0.2
    max_tokens: 300
sample:
  question: What tents do you sell?
  tone: friendly
---
system:
The parent's body, never inherited.
"""

_CHILD = """---
name: Tent Helper
base: {base}
model:
  parameters:
    temperature: 0.7
inputs:
  question:
    type: string
  tone:
    type: string
sample:
  tone: formal
---
system:
Answer in a {{{{tone}}}} tone.

user:
{{{{question}}}}
"""


def test_prompty_v1_base_gives_its_model_and_sample_the_child_winning(tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "base.prompty").write_text(_PARENT)
    (tmp_path / "child.prompty").write_text(_CHILD.format(base="shared/base.prompty"))
    (persona,) = interop.load("prompty", tmp_path / "child.prompty").personas
    config = persona.config
    assert config.model_settings.temperature == 0.7 and config.model_settings.max_tokens == 300
    assert config.create_profile().get_model() == "gpt-4o"
    assert dict(config.samples) == {"question": "What tents do you sell?", "tone": "formal"}
    system = config.create_profile().format_system_prompt(tone="formal")
    assert "formal tone" in system and "never inherited" not in system
    assert any("base.prompty" in note.message and note.kind == "converted" for note in persona.notes)
    assert "apiKey: ${env:OPENAI_API_KEY}" in persona.to_yaml()  # the parent's connection, a reference still


def test_prompty_v1_base_chain_loops_and_escapes_are_errors(tmp_path):
    (tmp_path / "a.prompty").write_text(_CHILD.format(base="b.prompty"))
    (tmp_path / "b.prompty").write_text(_CHILD.format(base="a.prompty"))
    with pytest.raises(ConfigError, match=r"cycle: a.prompty → b.prompty → a.prompty"):
        interop.load("prompty", tmp_path / "a.prompty")
    (tmp_path / "c.prompty").write_text(_CHILD.format(base="../outside.prompty"))
    with pytest.raises(ConfigError, match="must stay inside this file's folder"):
        interop.load("prompty", tmp_path / "c.prompty")
    (tmp_path / "d.prompty").write_text(_CHILD.format(base="missing.prompty"))
    with pytest.raises(ConfigError, match=r"d.prompty:\d+: base 'missing.prompty' is not found beside d.prompty"):
        interop.load("prompty", tmp_path / "d.prompty")


def test_prompty_sample_file_is_read_by_its_suffix_and_a_missing_one_is_named_where_referenced(tmp_path):
    """Prompty reads `${file:…}` as YAML for .yaml and .yml alike; a missing file is named at its line."""
    (tmp_path / "sample.yml").write_text("question: What tents do you sell?\ntone: formal\n")
    body = "---\nname: P\nsample: ${{file:{name}}}\n---\nsystem:\nBe {{{{tone}}}}.\n\nuser:\n{{{{question}}}}\n"
    (tmp_path / "p.prompty").write_text(body.format(name="sample.yml"))
    (persona,) = interop.load("prompty", tmp_path / "p.prompty").personas
    assert dict(persona.config.samples) == {"question": "What tents do you sell?", "tone": "formal"}
    (tmp_path / "q.prompty").write_text(body.format(name="gone.json"))
    with pytest.raises(ConfigError) as caught:
        interop.load("prompty", tmp_path / "q.prompty")
    expected = f"{tmp_path / 'q.prompty'}:3: sample file 'gone.json' is not found beside q.prompty"
    assert str(caught.value).startswith(expected)


@pytest.mark.parametrize(
    ("version", "model"),
    [
        ("v1", "model:\n  api: chat\n  configuration:\n    type: openai\n    name: gpt-4o\n"
               "    api_key: sk-LITERAL-1234\n"),
        ("v2", "model:\n  id: gpt-4o\n  connection:\n    kind: key\n    endpoint: http://127.0.0.1:9/v1\n"
               "    apiKey: sk-LITERAL-1234\n    nested:\n      - token: sk-LITERAL-1234\n"),
    ],
)
def test_a_literal_key_inside_a_kept_connection_is_dropped(tmp_path, version, model):
    """Metadata keeps connection settings as references only, however deep the literal key sits."""
    marker = "displayName: Keyed\n" if version == "v2" else "name: Keyed\n"
    (tmp_path / "keyed.prompty").write_text(f"---\n{marker}{model}---\nsystem:\nHello.\n")
    (persona,) = interop.load("prompty", tmp_path / "keyed.prompty").personas
    assert "sk-LITERAL" not in persona.to_yaml()
    assert any(note.kind == "secret" for note in persona.notes)


def test_semantic_kernel_stop_sequences_and_ai_model_id_are_the_personas_stop_and_model(tmp_path):
    """SK's .NET OpenAI settings write the stop strings as stop_sequences, Python's the model as ai_model_id:
    both are the persona's own settings, in a prompt's execution_settings and an agent's model.options."""
    prompt = tmp_path / "prompt.yaml"
    prompt.write_text("name: Sum\ntemplate: '{{$input}}'\nexecution_settings:\n  default:\n    ai_model_id: gpt-4o\n"
                      "    stop_sequences: ['###']\n    temperature: 0.1\n", encoding="utf-8")
    agent = tmp_path / "agent.yaml"
    agent.write_text("type: chat_completion_agent\nname: Teller\ninstructions: Tell a story.\nmodel:\n  id: gpt-4o\n"
                     "  options:\n    stop_sequences: [END]\n", encoding="utf-8")
    (from_prompt,) = interop.load("semantic-kernel", prompt).personas
    assert from_prompt.data["model"] == "gpt-4o"
    assert from_prompt.data["model_settings"] == {"stop": ["###"], "temperature": 0.1}
    (from_agent,) = interop.load("semantic-kernel", agent).personas
    assert from_agent.config.create_profile().to_request("Hi")["stop"] == ["END"]
    assert from_agent.data["metadata"]["semantic-kernel"] == {"type": "chat_completion_agent"}


def test_a_prompty_file_with_windows_line_ends_splits_into_its_messages(tmp_path):
    """A .prompty saved with \\r\\n line ends (and a byte-order mark) reads as Prompty reads it: its role
    lines start messages, and no \\r is left in a template."""
    path = tmp_path / "crlf.prompty"
    path.write_bytes(b"\xef\xbb\xbf---\r\nname: crlf\r\nmodel:\r\n  id: gpt-4o\r\n---\r\nsystem:\r\nBe nice.\r\n"
                     b"Twice.\r\n\r\nuser:\r\n{{question}}\r\n")
    (persona,) = interop.load("prompty", path).personas
    assert persona.data["templates"] == {"system": {"inline": "Be nice.\nTwice."}, "user": {"inline": "{{question}}"}}


@pytest.mark.parametrize("config,problem", [
    ('{"input_variables": {"a": 1}}', "input_variables must be a list"),
    ('{"execution_settings": {"default": {"model_id": 5}}}', "field 'model': expected text"),
])
def test_a_prompt_folders_config_mistake_is_named_in_config_json(tmp_path, config, problem):
    """A mistake in config.json is reported there, not in the skprompt.txt beside it."""
    folder = tmp_path / "Summarize"
    folder.mkdir()
    (folder / "config.json").write_text(config, encoding="utf-8")
    (folder / "skprompt.txt").write_text("Summarize {{$input}}", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        interop.load("semantic-kernel", folder)
    message = str(caught.value)
    assert message.startswith(str(folder / "config.json")) and problem in message and "skprompt.txt" not in message


DATA = Path(__file__).resolve().parent.parent / "data" / "interop"


def test_prompty_float_kind_is_a_number_as_prompty_sends_it(tmp_path):
    """Prompty's `float` kind is JSON's number (Prompty's own executors send it so): an output, input or tool
    parameter of kind float is imported as a number, not as a value of any type."""
    import prompty
    from prompty.providers.openai.executor import _output_schema_to_wire

    (persona,) = interop.load("prompty", DATA / "anthropic_structured.prompty").personas
    schema = persona.config.create_profile().output_schema.as_dict()
    theirs = _output_schema_to_wire(prompty.load(DATA / "anthropic_structured.prompty"))["json_schema"]["schema"]
    assert schema["properties"]["temperature"]["type"] == "number"
    assert "number" in theirs["properties"]["temperature"]["type"]  # ["number", "null"]: an output it may leave out
    path = tmp_path / "f.prompty"
    path.write_text("---\nname: f\nmodel: gpt-4o\ninputs:\n  - {name: ratio, kind: float, default: 0.5}\n"
                    "tools:\n  - name: scale\n    kind: function\n    description: Scale it.\n    parameters:\n"
                    "      - {name: factor, kind: float, required: true}\n---\nsystem:\nScale by {{ratio}}.\n",
                    encoding="utf-8")
    (persona,) = interop.load("prompty", path).personas
    profile = persona.config.create_profile()
    assert persona.config.inputs["ratio"].types == ("number",)
    assert profile.tools[0].parameters["properties"]["factor"] == {"type": "number"}
    assert not any("kind 'float'" in note.message for note in persona.notes)


@pytest.mark.parametrize("format,text", [
    ("prompty", "---\nname: f\nmodel: gpt-4o\ntools:\n  - name: get_weather\n    kind: function\n    parameters:\n"
                "      - {name: city, kind: string, required: true}\n---\nsystem:\nHelp.\n"),
    ("agentspec", '{"component_type": "Agent", "name": "f", "system_prompt": "Help.", "llm_config": '
                  '{"component_type": "OpenAiConfig", "name": "m", "model_id": "gpt-4o"}, "tools": [{"component_type":'
                  ' "ServerTool", "name": "get_weather", "description": null, "inputs": [{"title": "city", '
                  '"type": "string"}]}]}'),
])
def test_a_tool_without_a_description_is_described_by_its_name(tmp_path, format, text):
    """Prompty and Agent Spec take a tool without a description; a persona's tool needs one. The import
    describes it by its name and says so, instead of failing with the persona's own 'description must be
    a non-empty text'."""
    path = tmp_path / ("f.prompty" if format == "prompty" else "f.json")
    path.write_text(text, encoding="utf-8")
    (persona,) = interop.load(format, path).personas
    (tool,) = persona.config.create_profile().tools
    assert (tool.name, tool.description) == ("get_weather", "Get Weather.")
    note = next(note for note in persona.notes if "has no description" in note.message)
    assert note.kind == "derived" and "write what it does" in note.message
    assert note.line is not None or format == "agentspec"  # JSON is read without lines


def test_agentspec_output_defaults_are_kept_and_written_back(tmp_path):
    """An Agent Spec output's default (the value the agent gives when the model leaves the output out) is
    part of the output schema the persona imports, and an export writes it back, instead of being dropped."""
    from pyagentspec.serialization import AgentSpecDeserializer

    from profiles.interop.exporter import write as export

    (persona,) = interop.load("agentspec", DATA / "weather_agent_with_outputs.yaml").personas
    properties = persona.config.create_profile().output_schema.as_dict()["properties"]
    assert properties == {"temperature_rating": {"type": "integer", "default": 1},
                          "weather": {"type": "string", "default": "I don't know what the weather is"}}
    # the file's url is a placeholder its tests fill in ([[LLAMA70BV33_API_URL]]), which pyagentspec refuses
    files, _ = export(persona.config, "agentspec", base_url="http://127.0.0.1:9/v1")
    agent = AgentSpecDeserializer().from_json(next(iter(files.values())))
    assert [(output.title, output.default) for output in agent.outputs] == [
        ("temperature_rating", 1), ("weather", "I don't know what the weather is")]


def test_agentspec_tool_outputs_are_kept_and_written_back(tmp_path):
    """A tool's outputs (what it gives back) have no place in a persona's tool spec: they are kept under
    metadata.agentspec, with a note, and an export writes them back, instead of an empty list."""
    from pyagentspec.serialization import AgentSpecDeserializer

    from profiles.interop.exporter import write as export

    (persona,) = interop.load("agentspec", DATA / "weather_agent_with_outputs.yaml").personas
    assert persona.config.metadata["agentspec"]["tools"]["get_weather"]["outputs"] == [
        {"title": "tool_output", "type": "string"}]
    assert any("tools.get_weather.outputs" in note.message for note in persona.notes)
    files, _ = export(persona.config, "agentspec", base_url="http://127.0.0.1:9/v1")
    (tool,) = AgentSpecDeserializer().from_json(next(iter(files.values()))).tools
    assert [(output.title, output.type) for output in tool.outputs] == [("tool_output", "string")]


def test_a_prompty_file_of_only_a_body_is_its_prompt_as_prompty_reads_it(tmp_path, monkeypatch):
    """Prompty 2 reads a file without front matter as a prompt of that text (its own tests keep such a
    file), and front matter after blank lines as front matter: both import, and send what Prompty sends."""
    import prompty

    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test")
    path = DATA / "shorthand_body_only.prompty"
    (persona,) = interop.load("prompty", path).personas
    ours = persona.config.create_profile().format_messages("Hi")
    theirs = prompty.prepare(prompty.load(path), inputs={})
    assert [(m["role"], m["content"]) for m in ours][:1] == [(m.role, m.text) for m in theirs] == [
        ("system", "You are a helpful assistant that answers questions concisely.")]
    assert any("no front matter" in note.message for note in persona.notes)
    assert not any("v1" in note.message for note in persona.notes)
    late = tmp_path / "late.prompty"
    late.write_text("\n\n---\nname: late\nmodel: gpt-4o\ndescription: [not text]\n---\nsystem:\nHi.\n",
                    encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        interop.load("prompty", late)
    assert "late.prompty:6" in str(caught.value) and "description must be text" in str(caught.value)
    late.write_text("\n\n---\nname: late\nmodel: gpt-4o\n---\nsystem:\nHi.\n", encoding="utf-8")
    (persona,) = interop.load("prompty", late).personas
    assert persona.config.create_profile().format_messages("Q")[0]["content"] == "Hi."
    assert [(m.role, m.text) for m in prompty.prepare(prompty.load(late), inputs={})] == [("system", "Hi.")]


def test_prompty_v1_tools_in_prompty_shape_under_model_parameters(tmp_path):
    """Prompty's own tests keep tools in Prompty's shape (name, kind, parameters with a list of properties)
    under a v1 file's model.parameters: they are read as the top-level tools are, instead of refused as
    unknown keys of an OpenAI tool; a malformed one is named at its line."""
    (persona,) = interop.load("prompty", DATA / "legacy_tools.prompty").personas
    (tool,) = persona.config.create_profile().tools
    assert (tool.name, tool.description) == ("get_weather", "Get weather")
    assert dict(tool.parameters) == {"type": "object", "properties": {
        "location": {"type": "string", "description": "The city"}}, "required": []}
    bad = tmp_path / "bad.prompty"
    bad.write_text("---\nname: b\nmodel:\n  api: chat\n  parameters:\n    tools:\n      - name: f\n"
                   "        kind: function\n        description: F.\n        parameters:\n          properties: [1]\n"
                   "---\nsystem:\nHi.\n",
                   encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        interop.load("prompty", bad)
    assert "bad.prompty:10" in str(caught.value) and "parameters must be a list of properties" in str(caught.value)


def test_semantic_kernel_json_schema_response_format_is_the_output_schema():
    """Semantic Kernel's own sample asks for structured output in execution_settings (OpenAI's response_format
    of type json_schema): it becomes the persona's output schema, with its name and strict, instead of
    metadata too deep for a persona to hold, which failed the import."""
    (persona,) = interop.load("semantic-kernel", DATA / "TopMovies.yaml").personas
    output = persona.config.create_profile().output_schema
    assert (output.name, output.strict) == ("movie_result", True)
    movie = output.as_dict()["properties"]["Movies"]["items"]
    assert movie["properties"]["Rating"] == {"type": "number"} and movie["additionalProperties"] is False
    assert persona.config.model_settings.max_tokens == 1000
    assert any("response_format is the output schema" in note.message and note.line == 10 for note in persona.notes)


def test_a_kept_field_too_deep_for_metadata_is_dropped_with_a_note(tmp_path):
    """A field with no persona equivalent nesting deeper than a persona's metadata holds (8 levels) is
    dropped and said, instead of failing the whole import with 'flatten it' about a file the user did
    not write; one that fits is kept."""
    deep = "{a: {b: {c: {d: {e: x}}}}}"
    path = tmp_path / "p.yaml"
    # metadata, semantic-kernel, then fits: 2 + 6 levels, just what metadata holds; too_deep is one more
    path.write_text(f"name: P\ntemplate: Hi\nfits: {{y: {deep}}}\ntoo_deep: {{z: {{y: {deep}}}}}\n",
                    encoding="utf-8")
    (persona,) = interop.load("semantic-kernel", path).personas
    assert persona.config.metadata["semantic-kernel"]["fits"] == {"y": {"a": {"b": {"c": {"d": {"e": "x"}}}}}}
    assert "too_deep" not in persona.config.metadata["semantic-kernel"]
    note = next(note for note in persona.notes if note.message.startswith("too_deep dropped"))
    assert note.line == 4 and "over the 8 levels" in note.message


def test_prompty_input_schema_and_output_schema_are_its_inputs_and_outputs(tmp_path):
    """Prompty's runtime also names inputs and outputs after AgentSchema (`inputSchema: {properties: […]}`),
    as files in its own repository do: they are read as inputs and outputs (a thread input the history
    slot, a default kept), instead of kept as metadata with the thread taken for an input of any type."""
    (persona,) = interop.load("prompty", DATA / "threaded.prompty").personas
    config = persona.config
    assert config.inputs["question"].default == "Hello" and "conversation" not in config.inputs
    assert "inputSchema" not in config.metadata.get("prompty", {})
    history = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]
    sent = config.create_profile().format_messages("Why?", history=history)
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    path = tmp_path / "out.prompty"
    path.write_text("---\nname: o\nmodel: gpt-4o\noutputSchema:\n  properties:\n    - {name: city, kind: string}\n"
                    "---\nsystem:\nHi.\n", encoding="utf-8")
    (persona,) = interop.load("prompty", path).personas
    assert persona.config.create_profile().output_schema.as_dict()["properties"] == {"city": {"type": "string"}}


def test_an_adk_agents_sub_agents_are_said_to_be_left_out_of_its_export():
    """An imported ADK coordinator hands over to its sub-agents (each imported as a persona of its own); its
    export is one root_agent.yaml without them, and says so instead of dropping the hand-over silently."""
    from profiles.interop.exporter import write as export

    coordinator = interop.load("adk", EXAMPLES / "google_adk" / "support_desk").personas[0]
    assert coordinator.config.metadata["adk"]["sub_agents"] == [
        {"config_path": "billing_agent.yaml"}, {"config_path": "tech_agent.yaml"}]
    files, notes = export(coordinator.config, "adk")
    assert "sub_agents" not in files["root_agent.yaml"]
    assert any(note.kind == "dropped" and "sub_agents (billing_agent.yaml, tech_agent.yaml) not written"
               in note.message for note in notes)


def test_a_kept_field_too_bulky_for_metadata_is_dropped_with_a_note(tmp_path):
    """A persona's metadata holds at most 64,000 characters as JSON: a file whose fields with no persona
    equivalent hold more loses the bulkiest of them, each said at its line, instead of failing the whole
    import with 'keep bulky data elsewhere' and no line; the rest is kept."""
    path = tmp_path / "big.prompty"
    path.write_text("---\nname: big\nmodel: gpt-4o\nmetadata:\n  small: kept\n  notes: " + "x" * 70_000
                    + "\n  tags: [a, b]\n---\nsystem:\nHi.\n", encoding="utf-8")
    (persona,) = interop.load("prompty", path).personas
    assert persona.config.metadata["prompty"]["metadata"] == {"small": "kept", "tags": ["a", "b"]}
    (note,) = [note for note in persona.notes if "metadata.notes" in note.message]
    assert note.kind == "dropped" and note.line == 6 and "70,002 characters" in note.message
    assert persona.config.create_profile().format_system_prompt() == "Hi."
