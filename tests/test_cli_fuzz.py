"""Any command line made of the real commands and options with odd values: exit 0 or 2, never a fault.

The values are what a user's slip gives: empty text, `-`, a folder where a file goes, a missing
file, a huge or non-finite number, right-to-left marks, and a file name's byte that is not UTF-8
(which Python hands over as a lone surrogate, `\\udcff`). `serve` and `mcp` are left out: given
what they need, they serve until stopped.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiles.cli import cli

REPO = Path(__file__).resolve().parent.parent

#: Each command: how many arguments it takes at most, its options that take a value, its flags.
COMMANDS: dict[str, tuple[int, list[str], list[str]]] = {
    "render": (1, ["--question", "--var", "--language", "--model", "--deployment", "--kind", "--style", "--request",
                   "--history", "--name", "--index", "--store", "--rollout-key"], ["--strict", "--json", "--messages"]),
    "validate": (2, [], []),
    "check": (2, ["--snapshot", "--snapshot-check", "--store"], []),
    "explain": (1, ["--deployment", "--language", "--model", "--name", "--index", "--store", "--rollout-key"],
                ["--json"]),
    "diff": (1, ["--deployment", "--language", "--model", "--store-version", "--question", "--var", "--store",
                 "--rollout-key"], ["--json"]),
    "schema": (0, [], []),
    "chat-template": (2, ["--var", "--name"], ["--strict", "--spans"]),
    "batch": (0, ["--from", "--map", "--base", "--out", "--question", "--shard", "--on-error", "--format",
                  "--deployment", "--language", "--model", "--workers", "--engine"],
              ["--render", "--resume", "--force", "--quiet"]),
    "generate": (0, ["--base-url", "--model", "--count", "--rules", "--examples", "--plan", "--seed", "--dedupe",
                     "--out", "--api-key-env", "--batch-size", "--max-in-flight", "--max-batches", "--max-retries",
                     "--language", "--timeout"], ["--resume", "--force", "--quiet"]),
    "report": (1, ["--plan"], ["--json"]),
    "import crewai": (1, ["--out"], ["--force", "--quiet"]),
    "import prompty": (1, ["--out"], ["--force", "--quiet"]),
    "import semantic-kernel": (1, ["--out"], ["--force", "--quiet"]),
    "export": (2, ["--to", "--deployment", "--language", "--model", "--base-url", "--out"], ["--force"]),
    "store put": (1, ["--file", "--language", "--model", "--label", "--expect", "--note", "--author", "--store"],
                  ["--force"]),
    "store get": (1, ["--language", "--model", "--label", "--version", "--deployment", "--rollout-key", "--store"],
                  ["--json"]),
    "store list": (0, ["--store"], ["--json"]),
    "store history": (1, ["--language", "--model", "--store"], ["--json"]),
    "store label": (3, ["--language", "--model", "--expect", "--note", "--author", "--store"], ["--undo", "--force"]),
    "store rollout": (4, ["--language", "--model", "--expect", "--note", "--author", "--store"], ["--force"]),
    "store protect": (2, ["--author", "--store"], ["--json"]),
    "store diff": (3, ["--language", "--model", "--store"], ["--json"]),
    "store export": (1, ["--store"], ["--json"]),
    "store import": (1, ["--author", "--store"], ["--force"]),
}
#: Options whose right values are few: those, besides the odd ones.
CHOICES = {
    "--to": ["crewai", "prompty", "agentspec", "adk"],
    "--engine": ["local"],
    "--on-error": ["raise", "skip", "collect"],
    "--style": ["openai", "anthropic"],
    "--request": ["openai-chat", "openai-responses", "anthropic"],
    "--format": ["csv", "jsonl", "yaml", "parquet"],
    "--kind": ["all", "system", "user", "react"],
    "--workers": ["1"],
}
#: Files of the working folder, and paths that are no such file.
PATHS = ["persona.yaml", "triage.yaml", "empty.yaml", "bytes.yaml", "folder", "folder/", "missing.yaml", "", "-",
         ".", "conversation.json", "chat.jinja", "rules.txt", "data.csv", "data.map.yaml", "plan.yaml",
         "personas.jsonl", "name.txt", "\u202eevil.yaml", "\udcff.yaml", "/dev/null", "a" * 300]
ODD = ["", "-", "0", "-1", "1", "99999999999999999999999", "1e309", "nan", "inf", "x", "\udcff", "\u202e", "ü",
       "a=b", "=", "a=", "prod", "../x", "[1]", "{", "null", " ", "0/0", "1/0", "3/2", "1=2", "k=1,k=2",
       "sqlite:///store.db", "sqlite:////", "postgresql://", "garbage", "true"]
#: Loopback only, on a port nothing listens on: a connection is refused at once.
NOWHERE = "http://127.0.0.1:9/v1"
_TEXT = st.text(
    st.characters(exclude_categories=("Cs",), exclude_characters="\x00")
    | st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF),  # the bytes surrogateescape hands over
    max_size=6,
)
_VALUES = st.sampled_from(ODD) | st.sampled_from(PATHS) | _TEXT
#: An argument is mostly one the command may take (a file, a prompt name, a version), to get past its first check.
_ARGUMENTS = st.sampled_from([*PATHS[:4], *PATHS[9:], "greeter/name", "production", "1", "2", "1=50"]) | _VALUES
#: Options a command cannot run without, given first: a drawn value of the same option wins.
REQUIRED = {
    "batch": ["--from", "data.csv", "--out", "-", "--workers", "1"],
    "generate": ["--base-url", NOWHERE, "--model", "m", "--rules", "rules.txt", "--count", "1", "--max-retries", "0"],
    "import": ["--out", "imported"],
    "export": ["--to", "prompty"],
}


@st.composite
def command_lines(draw) -> list[str]:
    name = draw(st.sampled_from(sorted(COMMANDS)))
    most, options, flags = COMMANDS[name]
    args = name.split()
    args += REQUIRED.get(name.split()[0], [])  # what the command needs; an odd value drawn below replaces it
    args += [draw(_ARGUMENTS) for _ in range(draw(st.sampled_from([most, most, most, max(most - 1, 0), 0])))]
    for _ in range(draw(st.integers(0, 4))):
        if options and draw(st.booleans()):
            option = draw(st.sampled_from(options))
            if option == "--base-url":
                args += [option, draw(st.sampled_from([NOWHERE, "", "x", "ftp://127.0.0.1/"]))]
            else:
                args += [option, draw(st.sampled_from(CHOICES.get(option, ["-"])) | _VALUES)]
        elif flags:
            args.append(draw(st.sampled_from(flags)))
    return args


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """A working folder with a file of each kind the commands read."""
    root = tmp_path_factory.mktemp("fuzz")
    triage = (REPO / "profile_configs" / "triage.yaml").read_text(encoding="utf-8")
    files = {
        "persona.yaml": (REPO / "profile_configs" / "summarizer.yaml").read_text(encoding="utf-8"),
        "triage.yaml": triage.replace("{file: schemas/triage.schema.json}", "{type: object}"),
        "empty.yaml": "",
        "conversation.json": (REPO / "examples" / "chat" / "conversation.json").read_text(encoding="utf-8"),
        "chat.jinja": (REPO / "examples" / "chat" / "qwen2.5-instruct.jinja").read_text(encoding="utf-8"),
        "rules.txt": "Staff of a small bookshop.\n",
        "data.csv": "name,role\nAda,Guide\n",
        "data.map.yaml": "fields:\n  name: name\n  role: role\n",
        "plan.yaml": "count: 2\nattributes:\n  tone: {values: [calm, brisk]}\n",
        "personas.jsonl": (REPO / "examples" / "generate" / "personas.jsonl").read_text(encoding="utf-8"),
        "name.txt": "Ada\n",
    }
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "bytes.yaml").write_bytes(b"\xff\xfe\x00name: Ada")
    (root / "folder").mkdir()
    return root


@pytest.mark.filterwarnings("default::profiles.rendering.families.UnknownModelWarning")  # shown, as a user sees it
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=command_lines())
def test_no_command_line_is_a_fault(runner, folder, monkeypatch, args):
    monkeypatch.chdir(folder)
    monkeypatch.setenv("PROFILES_STORE_URL", f"sqlite:///{folder / 'store.db'}")
    monkeypatch.setenv("PROFILES_AUTHOR", "fuzz")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = runner.invoke(cli, args, input="")
    assert result.exit_code in (0, 2), (args, result.output)
    assert "internal error" not in result.output and "Traceback" not in result.output, (args, result.output)
