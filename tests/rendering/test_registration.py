"""Filters, tests, globals and extensions added in Python or by installed packages, under the budget."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from jinja2 import nodes, pass_context
from jinja2.ext import Extension

import profiles
from profiles import ConfigError, ProfileConfig, RenderError, parse_profiles
from profiles.rendering.plugins import ENTRY_POINT_GROUP
from profiles.rendering.renderer import Renderer, get_renderer


def render(renderer, source, **variables):
    return renderer.render(renderer.compile(source, "t"), variables)


class ChatTag(Extension):
    """banks' `{% chat role="user" %}…{% endchat %}`, in short: the body as a JSON message."""

    tags = {"chat"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        parser.stream.expect("name:role")
        parser.stream.expect("assign")
        role = parser.parse_expression()
        body = parser.parse_statements(("name:endchat",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_message", [role]), [], [], body).set_lineno(lineno)

    def _message(self, role, caller):
        return json.dumps({"role": role, "content": caller()})


def test_filters_tests_globals_and_extensions_of_one_renderer():
    renderer = Renderer(
        (),
        filters={"money": lambda value: f"{value:,.2f} EUR"},
        tests={"even_cents": lambda value: round(value * 100) % 2 == 0},
        globals={"company": "Acme", "shout": lambda text: text.upper() + "!"},
        extensions=[ChatTag],
    )
    source = (
        "{{ 1234.5|money }} {{ 1234.5 is even_cents }} {{ shout(company) }} "
        '{% chat role="user" %}Hi {{ company }}{% endchat %}'
    )
    assert render(renderer, source) == '1,234.50 EUR True ACME! {"role": "user", "content": "Hi Acme"}'


def test_additions_after_creation_apply_to_templates_compiled_next():
    renderer = Renderer(())
    with pytest.raises(RenderError, match="No filter named 'rot13'.*add_filter"):
        renderer.compile("{{ 'abc'|rot13 }}", "t")
    renderer.add_filter("rot13", lambda text: text.translate(str.maketrans("abc", "nop")))
    renderer.add_test("short", lambda text: len(text) < 3)
    renderer.add_global("greeting", "hello")
    renderer.add_extension(ChatTag)
    assert render(renderer, "{{ 'abc'|rot13 }} {{ 'ab' is short }} {{ greeting }}") == "nop True hello"
    assert render(renderer, '{% chat role="system" %}x{% endchat %}') == '{"role": "system", "content": "x"}'


def test_an_unknown_tag_points_at_extensions():
    with pytest.raises(RenderError, match="unknown tag 'chat'.*add_extension") as caught:
        Renderer(()).compile('{% chat role="user" %}x{% endchat %}', "t")
    assert "{% raw %}" not in caught.value.message


def test_loop_controls_are_on():
    source = "{% for i in range(10) %}{% if i == 3 %}{% break %}{% endif %}{% if i is odd %}{% continue %}{% endif %}"
    source += "{{ i }}{% endfor %}"
    assert render(Renderer(()), source) == "02"


def test_a_registered_function_gets_jinjas_context_argument():
    @pass_context
    def greet(context, suffix):
        return f"{context['name']}{suffix}"

    assert render(Renderer((), filters={"greet": greet}), "{{ '!'|greet }}", name="Ada") == "Ada!"


def test_registered_results_are_size_checked():
    """A function that builds a huge value is stopped at the value bound, naming it."""
    renderer = Renderer((), filters={"blow": lambda value, n: value * n}, globals={"make": lambda n: ["x"] * n})
    with pytest.raises(RenderError, match=r"would build over 1000000 .*MAX_VALUE_CHARS"):
        render(renderer, "{{ 'x'|blow(2000000) }}")
    with pytest.raises(RenderError, match="MAX_VALUE_CHARS"):
        render(renderer, "{{ make(2000000)|length }}")
    assert render(renderer, "{{ 'ab'|blow(3) }}{{ make(2)|length }}") == "ababab2"


def test_registered_functions_spend_the_step_budget():
    renderer = Renderer((), tests={"anything": lambda value: True}, filters={"same": lambda value: value})
    source = "{% for i in range(100000) %}{% for j in range(20) %}{{ i|same if j is anything }}{% endfor %}{% endfor %}"
    with pytest.raises(RenderError, match="loop iterations and calls|output limit"):
        render(renderer, source)


def test_a_filter_under_a_builtin_name_is_printed_through_the_checks():
    """`upper` registered anew may return anything, so its result is printed like any value."""
    renderer = Renderer((), filters={"upper": lambda value: len})
    with pytest.raises(RenderError, match="cannot be printed"):
        render(renderer, "{{ 'a'|upper }}")


def test_objects_and_classes_stay_as_they_are():
    class Calendar:
        def today(self):
            return "Monday"

    renderer = Renderer((), globals={"calendar": Calendar()})
    assert render(renderer, "{{ calendar.today() }}") == "Monday"


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda r: r.add_filter("money", "not a function"), "must be a function"),
        (lambda r: r.add_test("", len), "name"),
        (lambda r: r.add_filter("has space", len), "name"),
        (lambda r: r.add_extension(len), "subclass of jinja2.ext.Extension"),
        (lambda r: r.add_extension("jinja2.ext.do"), "subclass of jinja2.ext.Extension"),
    ],
)
def test_bad_registrations_are_refused(call, match):
    with pytest.raises(RenderError, match=match):
        call(Renderer(()))


def test_process_wide_registration_reaches_persona_templates():
    """`profiles.register_filter` adds to every renderer, those made earlier included."""
    earlier = get_renderer(())
    profiles.register_filter("test_initials", lambda text: "".join(word[0] for word in text.split()))
    profiles.register_global("test_house_style", "Keep it short.")
    config = ProfileConfig(
        name="Grace Brewster Hopper", role="Admiral", templates={"user": {"inline": "{{ name|test_initials }}: "
                                                                           "{{ test_house_style }} {{ question }}"}}
    )
    assert config.create_profile().format_user_prompt("Go") == "GBH: Keep it short. Go"
    assert render(earlier, "{{ 'Ada Lovelace'|test_initials }}") == "AL"


def test_yaml_cannot_register_anything():
    for key in ("filters", "extensions", "globals"):
        with pytest.raises(ConfigError, match="unknown field"):
            parse_profiles(f"name: a\nrole: b\n{key}: {{x: os.system}}\n")


_PLUGIN = textwrap.dedent(
    '''
    from jinja2 import nodes
    from jinja2.ext import Extension

    def register(jinja):
        jinja.add_filter("money", lambda value: f"{value:.2f} EUR")
        jinja.add_global("house", "Acme")

    class Upper(Extension):
        tags = {"upper"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endupper",), drop_needle=True)
            return nodes.CallBlock(self.call_method("_upper"), [], [], body).set_lineno(lineno)

        def _upper(self, caller):
            return caller().upper()

    def broken(jinja):
        raise RuntimeError("the plugin is broken")
    '''
)


def _install_plugin(folder, entry_points: str) -> None:
    """A package and its dist-info on a folder of sys.path: what pip leaves behind for an installed plugin."""
    (folder / "prompt_plugin.py").write_text(_PLUGIN)
    info = folder / "prompt_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: prompt-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{entry_points}")
    (info / "RECORD").write_text("")


def _run_with(folder, code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(folder)!r})\n{code}"],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_an_installed_package_adds_through_entry_points(tmp_path):
    _install_plugin(tmp_path, "money = prompt_plugin:register\nupper = prompt_plugin:Upper\n")
    code = (
        "from profiles import ProfileConfig\n"
        "config = ProfileConfig(name='n', role='r', templates={'user': {'inline': "
        "\"{{ 3|money }} {% upper %}{{ house }} {{ question }}{% endupper %}\"}})\n"
        "print(config.create_profile().format_user_prompt('go'))\n"
    )
    done = _run_with(tmp_path, code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "3.00 EUR ACME GO"


def test_a_broken_entry_point_is_named(tmp_path):
    _install_plugin(tmp_path, "broken = prompt_plugin:broken\n")
    code = (
        "from profiles.rendering.renderer import Renderer\n"
        "from profiles import RenderError\n"
        "try:\n    Renderer(()).compile('x', 't')\nexcept RenderError as exc:\n    print(exc)\n"
    )
    done = _run_with(tmp_path, code)
    assert done.returncode == 0, done.stderr
    assert "entry point 'broken' (prompt_plugin:broken) of group agent_profiles.jinja failed" in done.stdout
    assert "RuntimeError: the plugin is broken" in done.stdout


def test_the_entry_point_scan_finds_what_importlib_metadata_finds(tmp_path):
    # the scan skips parsing packages whose entry_points.txt never names the group; it must still
    # find exactly the standard answer, with a plugin installed and without one
    code = (
        "from importlib.metadata import entry_points\n"
        "from profiles.rendering import plugins\n"
        "ours = sorted((p.name, p.value) for p in plugins._group_entry_points())\n"
        "theirs = sorted((p.name, p.value) for p in entry_points(group=plugins.ENTRY_POINT_GROUP))\n"
        "assert ours == theirs, (ours, theirs)\n"
        "print(ours)\n"
    )
    bare = _run_with(tmp_path, code)
    assert bare.returncode == 0, bare.stderr
    assert bare.stdout.strip() == "[]"
    _install_plugin(tmp_path, "money = prompt_plugin:register\n")
    found = _run_with(tmp_path, code)
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "[('money', 'prompt_plugin:register')]"
