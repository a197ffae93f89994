"""The `textbook-chat` command: one parser, one module per group of commands (`main.main`)."""
