"""The harness: config, tasksets, workspaces and sandbox, tools, the agent loop, models, runner, CLI."""

if __name__ == "harness":  # imported by its folder name, which would make a second copy of every class
    raise SystemExit("error: import ctxbench.harness, not harness: the folder harness/ is the package ctxbench.harness")
