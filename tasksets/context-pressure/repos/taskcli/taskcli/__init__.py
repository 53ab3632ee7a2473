"""taskcli - a small command-line task list with time tracking.

The package is organised as follows:

* :mod:`taskcli.cli` - argument parsing and every user-facing command;
* :mod:`taskcli.models` - the ``Task`` and ``TimeEntry`` records;
* :mod:`taskcli.storage` - JSON and SQLite backends plus the undo journal;
* :mod:`taskcli.dates` / :mod:`taskcli.durations` - parsing of human input;
* :mod:`taskcli.formatting` - table rendering for the terminal;
* :mod:`taskcli.exporters` / :mod:`taskcli.importers` - data exchange;
* :mod:`taskcli.reports` - aggregation used by ``report`` and ``stats``.
"""

__version__ = "1.4.2"
