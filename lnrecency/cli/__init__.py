"""Floor 9, the ``lnrecency`` command: :mod:`~.app` (the parser, built from each command's declared options, and
``main``) and :mod:`~.commands` (one module per subcommand; commands never import each other)."""
