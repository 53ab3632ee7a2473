"""ctxbench's modules depend on each other in one direction: records <- strategies, models, tools <-
agent loop, runner, executors <- reports <- CLI and nightly. Read from the source (AST), so an import
inside a function counts like any other."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"harness": "ctxbench.harness", "strategies": "ctxbench.strategies", "reports": "ctxbench.reports"}

# Lowest first. A module may import its own layer or a lower one. Entries ending in "." are packages;
# "ctxbench.harness.*" is every module directly in harness/ (the foundation: config vocabulary, errors,
# paths, tokens, pricing, the context and history vocabulary, the protocols).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation and records", ("ctxbench.harness", "ctxbench.harness.*", "ctxbench.harness.config.",
                                "ctxbench.harness.records.", "ctxbench.harness.markup.", "ctxbench.harness.wire.")),
    ("strategies, models, loop, environments", ("ctxbench.strategies.", "ctxbench.harness.models.",
                                                "ctxbench.harness.loop.", "ctxbench.harness.sandbox.",
                                                "ctxbench.harness.environments.", "ctxbench.harness.tasks.",
                                                "ctxbench.harness.swebench.")),
    ("runner, endpoints, external agents", ("ctxbench.harness.run.", "ctxbench.harness.endpoints.",
                                            "ctxbench.harness.agents.")),
    ("reports", ("ctxbench.reports.",)),
    ("CLI", ("ctxbench.harness.cli.",)),
]

LAZY_ALLOWED = ("ctxbench.harness.cli",)
"""Where importing ctxbench modules inside functions is allowed: the CLI loads a subcommand's
dependencies (pandas, matplotlib) only when that subcommand runs, so `ctxbench --help` starts fast."""
LAZY_TARGETS = ("ctxbench.reports.plots",)
"""Modules that may be imported inside functions anywhere: they load a heavy third-party library
(matplotlib) that commands without plots never need. Such imports still count in the graph."""


def module_files() -> dict[str, Path]:
    out = {}
    for folder, package in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([package, *parts])] = path
    return out


def imports(name: str, path: Path, known: set[str]) -> list[tuple[str, bool]]:
    """(imported ctxbench module, inside a function?) for every import in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                targets = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in child.names]
            else:
                visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))
                continue
            found.extend((t, in_function) for t in targets if t.startswith("ctxbench"))

    visit(ast.parse(path.read_text()), False)
    return found


def layer_of(module: str) -> int | None:
    for index, (_, members) in enumerate(LAYERS):
        for m in members:
            if module == m or (m.endswith(".") and (module == m[:-1] or module.startswith(m))):
                return index
            if m.endswith(".*") and module.startswith(m[:-1]) and "." not in module[len(m) - 1:] \
                    and (ROOT / "harness" / f"{module[len(m) - 1:]}.py").is_file():
                return index
    return None


def import_graph() -> tuple[dict[str, set[str]], list[tuple[str, str]]]:
    files = module_files()
    graph: dict[str, set[str]] = {m: set() for m in files}
    lazy = []
    for module, path in files.items():
        for target, in_function in imports(module, path, set(files)):
            graph[module].add(target)
            if in_function:
                lazy.append((module, target))
    return graph, lazy


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph (as a path that returns to its start), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_covers_the_package():
    graph, _ = import_graph()
    assert len(graph) > 60
    assert "ctxbench.harness.records" in graph["ctxbench.harness.run.runner"]
    assert "ctxbench.strategies" in graph["ctxbench.harness.run.single_run"]
    assert sum(len(targets) for targets in graph.values()) > 150


def test_no_import_cycles():
    graph, _ = import_graph()
    assert find_cycle(graph) is None


def test_every_module_has_a_layer():
    graph, _ = import_graph()
    assert [m for m in sorted(graph) if layer_of(m) is None] == []


def test_imports_go_down_the_layers():
    graph, _ = import_graph()
    upward = [f"{m} ({LAYERS[layer_of(m)][0]}) imports {t} ({LAYERS[layer_of(t)][0]})"
              for m, targets in sorted(graph.items()) for t in sorted(targets)
              if t in graph and layer_of(t) > layer_of(m)]
    assert upward == []


def test_reports_never_run_experiments():
    graph, _ = import_graph()
    running = {m for m in graph if layer_of(m) == 2}
    assert [(m, sorted(graph[m] & running)) for m in sorted(graph) if m.startswith("ctxbench.reports")
            and graph[m] & running] == []


def test_no_function_level_imports_of_ctxbench_outside_the_cli():
    _, lazy = import_graph()
    assert [(m, t) for m, t in lazy if not m.startswith(LAZY_ALLOWED) and t not in LAZY_TARGETS] == []


def test_the_models_import_no_strategy():
    """Strategies call models (a summarizer's model calls); the simulator reads what strategies write
    through the records layer (`ctxbench.harness.markup.placeholders`, `ctxbench.harness.markup.summaries`), never a strategy."""
    graph, _ = import_graph()
    assert [(m, t) for m, targets in sorted(graph.items()) if m.startswith("ctxbench.harness.models")
            for t in sorted(targets) if t.startswith("ctxbench.strategies")] == []
