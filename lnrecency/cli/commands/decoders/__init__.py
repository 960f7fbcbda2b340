"""The subcommands on decoders (optional extra ``models``): ``train``, ``probe``, ``experiments``,
``corpus-stats``. Like every command, none imports another."""
