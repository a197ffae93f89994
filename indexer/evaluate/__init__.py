"""`textbook-chat eval`: measure whether retrieval finds the right section, anchor-exact."""
