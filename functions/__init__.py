"""textbook-chat runtime: the HTTP API (Lambda handlers) and the contract the indexer writes to."""
