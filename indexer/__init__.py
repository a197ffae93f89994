"""textbook-chat indexer: Docusaurus Markdown/MDX -> anchor-exact chunks -> Qdrant."""
