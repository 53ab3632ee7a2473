"""An experiment whose arms vary the agent and the strategy reads as two factors in its report."""

from __future__ import annotations

from ctxbench.reports.report import write_report

ARMS = {"builtin/baseline": ("builtin", "baseline", 1000), "builtin/observation_masking": ("builtin", "observation_masking", 800),
        "mini/baseline": ("mini", "baseline", 2000), "mini/observation_masking": ("mini", "observation_masking", 1000)}


def test_the_report_lays_the_arms_out_by_agent_and_strategy(tmp_path, build):
    man = build.manifest(list(ARMS))
    man["strategies"] = [{"name": name, "params": {}, "label": key, "agent": agent}
                         for key, (agent, name, _) in ARMS.items()]
    runs = [r for key, (_, _, tokens) in ARMS.items()
            for r in build.grid(key, [[True, True, False]] * 6, tokens=tokens)]
    folder = build.write_folder(tmp_path / "exp", runs, man, transcripts=False)
    write_report(folder)
    text = (folder / "report.md").read_text()
    table = text[text.index("## Agents and strategies"):]
    assert "| agent | baseline | observation_masking |" in table
    assert "| builtin | 67% · 1,000 tokens | 67% · 800 tokens, ×0.80 tokens |" in table
    assert "| mini | 67% · 2,000 tokens | 67% · 1,000 tokens, ×0.50 tokens |" in table
    assert "Each strategy against `builtin/baseline`" in text  # the default reference where arms vary the agent
    within = table[table.index("| agent | strategy | against |"):]
    assert "| mini | observation_masking | baseline | +0.0 pts" in within and "×0.50" in within


def test_an_experiment_of_one_agent_has_no_such_section(tmp_path, build):
    runs = build.grid("baseline", [[True, False]] * 3) + build.grid("trimmer", [[True, True]] * 3)
    folder = build.write_folder(tmp_path / "exp", runs, build.manifest(["baseline", "trimmer"]), transcripts=False)
    write_report(folder)
    assert "Agents and strategies" not in (folder / "report.md").read_text()
