"""The variables a template reads, across the files it extends, includes and imports, with their places."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from profiles.rendering.renderer import Renderer


@pytest.fixture
def root(tmp_path):
    files = {
        "base.j2": "You are {{ name }}.\n{% block body %}{% endblock %}\nGoal: {{ goal }}\n",
        "child.j2": "{% extends 'base.j2' %}{% block body %}Role: {{ role }}{% endblock %}",
        "row.j2": "- {{ item }} for {{ customer }}\n",
        "list.j2": "{% for item in items %}{% include 'row.j2' %}{% endfor %}",
        "macros.j2": "{% macro sign() %}-- {{ signature }}{% endmacro %}",
        "with_context.j2": "{% import 'macros.j2' as m with context %}{{ m.sign() }}",
        "without_context.j2": "{% import 'macros.j2' as m %}{% from 'macros.j2' import sign %}x",
        "optional.j2": "{% if date is defined %}{{ date }}{% endif %}{{ tone|default('plain') }}"
        "{% if x %}{% set mood = 'up' %}{% endif %}{{ mood }}",
        "dynamic.j2": "{% include kind ~ '.j2' %}",
        "missing.j2": "{% include 'nowhere.j2' ignore missing %}{{ here }}",
        "loop_a.j2": "{{ a }}{% if deeper %}{% include 'loop_b.j2' %}{% endif %}",
        "loop_b.j2": "{{ b }}{% include 'loop_a.j2' %}",
        "choice.j2": "{% include ['none.j2', 'row.j2'] %}",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_a_child_reads_its_parents_variables(root):
    compiled = Renderer([root]).load("child.j2")
    assert compiled.declared == {"name", "goal", "role"}
    assert compiled.required == {"name", "goal", "role"}
    assert (compiled.variables["name"].template, compiled.variables["name"].line) == ("base.j2", 1)
    assert compiled.where("goal") == "template 'base.j2' line 3"
    assert compiled.where("role") == "template 'child.j2' line 1"
    assert compiled.files == ("base.j2",) and compiled.closed


def test_names_an_includer_sets_are_not_asked_of_the_caller(root):
    """`item` is the loop's; `customer` comes from outside."""
    compiled = Renderer([root]).load("list.j2")
    assert compiled.declared == {"items", "customer"}
    assert compiled.where("customer") == "template 'row.j2' line 1"


def test_imports_count_only_with_context(root):
    renderer = Renderer([root])
    assert renderer.load("with_context.j2").declared == {"signature"}
    assert renderer.load("without_context.j2").declared == frozenset()


def test_tested_defaulted_or_self_set_variables_are_optional(root):
    compiled = Renderer([root]).load("optional.j2")
    assert compiled.declared == {"date", "tone", "x", "mood"}
    assert compiled.required == {"x"}


def test_a_computed_name_leaves_the_template_open(root):
    compiled = Renderer([root]).load("dynamic.j2")
    assert not compiled.closed and compiled.declared == {"kind"}


def test_a_missing_file_and_a_cycle_are_harmless(root):
    renderer = Renderer([root])
    assert renderer.load("missing.j2").declared == {"here"}
    assert renderer.load("loop_a.j2").declared == {"a", "deeper", "b"}


def test_a_list_of_names_takes_the_first_that_exists(root):
    assert Renderer([root]).load("choice.j2").declared == {"item", "customer"}


def test_the_union_renders(root):
    """Passing exactly the declared variables renders every file."""
    renderer = Renderer([root])
    compiled = renderer.load("child.j2")
    values = {"name": "Ada", "goal": "ship", "role": "Lead", "unused": 1}
    text = renderer.render(compiled, {name: values[name] for name in compiled.declared})
    assert text == "You are Ada.\nRole: LeadGoal: ship"  # trim_blocks eats the line break after a block tag


def test_nothing_runs_while_finding_variables():
    """Working out the variables evaluates nothing (Jinja's own meta module folds constants)."""
    renderer = Renderer(())
    compiled = renderer.compile("{{ 7 ** 2000000000 }}{{ 'a' * 10**9 }}{{ x }}", "t")
    assert compiled.declared == {"x"}


# one walk over the tree gives what a walk per kind of node gives ------------------------------


def _analysis_by_find_all(environment, tree, name):
    """`analyse` as a separate `find_all` walk per kind of node: the reference the single walk must match."""
    from jinja2 import nodes

    from profiles.rendering import declared

    tracker = declared._Tracker(environment)
    tracker.visit(tree)
    undeclared = tracker.undeclared
    lines = {}
    for node in tree.find_all(nodes.Name):
        if node.ctx == "load" and node.name in undeclared:
            if node.name not in lines or node.lineno < lines[node.name]:
                lines[node.name] = node.lineno
    optional = set()
    for test in tree.find_all(nodes.Test):
        if test.name in ("defined", "undefined") and isinstance(test.node, nodes.Name):
            optional.add(test.node.name)
    for flt in tree.find_all(nodes.Filter):
        if flt.name in ("default", "d") and isinstance(flt.node, nodes.Name):
            optional.add(flt.node.name)
    stored = {node.name for node in tree.find_all(nodes.Name) if node.ctx in ("store", "param")}
    stored |= {macro.name for macro in tree.find_all(nodes.Macro)}
    stored |= {imported.target for imported in tree.find_all(nodes.Import)}
    for imported in tree.find_all(nodes.FromImport):
        stored |= {item[1] if isinstance(item, tuple) else item for item in imported.names}
    optional |= stored
    ordered = sorted(undeclared, key=lambda item: (lines.get(item, 1), item))
    variables = {item: declared.Variable(item, name, lines.get(item, 1), item in optional) for item in ordered}
    references = tuple(
        declared._reference(node)
        for node in tree.find_all((nodes.Extends, nodes.Include, nodes.Import, nodes.FromImport))
    )
    return declared.FileAnalysis(variables, frozenset(stored), references)


def _same_analysis(environment, source, name="t.j2"):
    from profiles.rendering.declared import analyse

    tree = environment.parse(source, name, name)
    ours = analyse(environment, tree, name)
    assert ours == _analysis_by_find_all(environment, environment.parse(source, name, name), name)
    return ours


def test_the_single_walk_matches_a_walk_per_node_kind_on_every_bundled_and_fixture_template(root):
    from pathlib import Path

    environment = Renderer([root]).env
    repo = Path(__file__).resolve().parents[2]
    paths = [*sorted((repo / "templates").rglob("*.j2")), *sorted(root.glob("*.j2"))]
    assert len(paths) > 20
    for path in paths:
        _same_analysis(environment, path.read_text(encoding="utf-8"), path.name)


_PIECES = (
    "{{ a }}",
    "{{ b|default('x') }}",
    "{% if c is defined %}{{ c }}{% endif %}",
    "{% if d %}{% set e = 1 %}{% endif %}{{ e }}",
    "{% for item in items %}{{ item }}{{ loop.index }}{% endfor %}",
    "{% macro m(p) %}{{ p }}{{ f }}{% endmacro %}{{ m(g) }}",
    "{% include 'x.j2' ignore missing %}",
    "{% include ['y.j2', 'z.j2'] without context %}",
    "{% include kind ~ '.j2' %}",
    "{% import 'm.j2' as lib with context %}",
    "{% from 'm.j2' import one, two as three %}{{ three }}",
    "{% set h %}{{ i }}{% endset %}",
    "{{ j is undefined }}",
    "{% with k = l %}{{ k }}{% endwith %}",
    "\n",
)


@given(st.lists(st.sampled_from(_PIECES), max_size=12))
def test_the_single_walk_matches_a_walk_per_node_kind_on_composed_templates(pieces):
    environment = Renderer([]).env
    _same_analysis(environment, "".join(pieces))


def test_references_come_in_the_order_they_are_written():
    environment = Renderer([]).env
    found = _same_analysis(
        environment,
        "{% include 'a.j2' %}{% if x %}{% import 'b.j2' as b %}{% include 'c.j2' %}{% endif %}"
        "{% from 'd.j2' import e %}",
    )
    assert [reference.names for reference in found.references] == [("a.j2",), ("b.j2",), ("c.j2",), ("d.j2",)]
    assert found.stored >= {"b", "e"}
