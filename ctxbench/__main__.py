"""`python -m ctxbench`: the same command as the `ctxbench` console script."""

from ctxbench.harness.cli import main

if __name__ == "__main__":
    main()
