"""Tools built on the engine, never imported by it: the ``callsieve`` command (``cli``),
its subcommands (``demo``, ``parse``, ``diagrams`` with ``trace``, ``bench``) and the
bundled samples. Like lark's ``tools/``: the engine works without this package."""
