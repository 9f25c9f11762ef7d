"""The ``callsieve`` command: each subcommand lives in its own module.

    callsieve demo        bundled transcripts: what a naive filter shows vs what callsieve extracts
    callsieve parse       a transcript → JSON Lines events
    callsieve diagram     the machine's state diagrams (and --check, --trace)
    callsieve bench       throughput, growth and memory against a regex ceiling and a naive parser
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Callable, Sequence

#: subcommand → module defining ``add_arguments(parser)`` and ``run(args) -> int``.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("callsieve.tools.demo", "run the bundled sample transcripts and show what callsieve extracts"),
    "parse": ("callsieve.tools.parse", "parse a transcript (stdin or file) into JSON Lines events"),
    "diagram": ("callsieve.tools.diagrams", "draw the machine's state diagrams; --check compares with diagrams/"),
    "bench": ("callsieve.tools.bench", "benchmark throughput, growth and memory"),
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="callsieve", description="Split streamed LLM output into text, reasoning and tool calls.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    runners: dict[str, Callable[[argparse.Namespace], int]] = {}
    for name, (module_name, help_text) in COMMANDS.items():
        module = importlib.import_module(module_name)
        p = sub.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(p)
        runners[name] = module.run
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return runners[args.command](args)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
