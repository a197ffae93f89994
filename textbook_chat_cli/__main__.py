"""`python -m textbook_chat_cli ...` runs the `textbook-chat` command."""

import sys

from textbook_chat_cli.main import main

sys.exit(main())
