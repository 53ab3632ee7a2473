"""Allow ``python -m taskcli``."""

import sys

from taskcli.cli import main

if __name__ == "__main__":
    sys.exit(main())
