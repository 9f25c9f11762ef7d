"""The ``callsieve`` command: each subcommand lives in its own module.

    callsieve demo        bundled transcripts: what a naive filter shows vs what callsieve extracts
    callsieve parse       a transcript → JSON Lines events
    callsieve diagram     the machine's state diagrams (and --check, --trace)
    callsieve bench       throughput, growth and memory against a regex ceiling and a naive parser
    callsieve --version

Every error a user can cause (a bad option, an unreadable file, ``--on-malformed raise``
meeting a malformed block) is one ``callsieve: error: ...`` line on stderr and exit
status 2; a traceback means a bug in callsieve.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Callable, NoReturn, Sequence

import callsieve
from callsieve import native
from callsieve.tools.parse import USAGE_ERROR, error

#: subcommand → module defining ``add_arguments(parser)`` and ``run(args) -> int``.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("callsieve.tools.demo", "run the bundled sample transcripts and show what callsieve extracts"),
    "parse": ("callsieve.tools.parse", "parse a transcript (stdin or file) into JSON Lines events"),
    "diagram": ("callsieve.tools.diagrams", "draw the machine's state diagrams; --check compares with diagrams/"),
    "bench": ("callsieve.tools.bench", "benchmark throughput, growth and memory"),
}

class _Parser(argparse.ArgumentParser):
    """argparse, with its errors as one line (argparse prints the usage block first)."""

    def error(self, message: str) -> NoReturn:
        error(f"{message} (see: {self.prog} --help)")
        raise SystemExit(USAGE_ERROR)


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(prog="callsieve", description="Split streamed LLM output into text, reasoning and tool calls.")
    parser.add_argument("--version", action="version", version=f"callsieve {callsieve.__version__}, {native.build()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    runners: dict[str, Callable[[argparse.Namespace], int]] = {}
    for name, (module_name, help_text) in COMMANDS.items():
        module = importlib.import_module(module_name)
        p = sub.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(p)
        runners[name] = module.run
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version (0) or a usage error (2, already reported)
        return e.code if isinstance(e.code, int) else USAGE_ERROR
    if args.command is None:
        parser.print_help(sys.stderr)
        return USAGE_ERROR
    try:
        return runners[args.command](args)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except callsieve.CallsieveError as e:
        # A subcommand that let one through (bad dialect, schema, on_malformed="raise"):
        # still the user's input, not a bug.
        error(str(e))
        return USAGE_ERROR


if __name__ == "__main__":
    sys.exit(main())
